// loom/nn/cloneable.h — Cloneable<Self>: what a module of one's own derives
// from to get clone() (torch::nn::Cloneable):
//
//   struct NetImpl : loom::nn::Cloneable<NetImpl> {
//     explicit NetImpl(int64_t hidden) : hidden(hidden) { reset(); }
//     void reset() override {  // builds every parameter and submodule
//       fc = register_module("fc", loom::nn::Linear(4, hidden));
//     }
//     int64_t hidden;
//     loom::nn::Linear fc{nullptr};
//   };
//
// clone() copy-constructs Self (plain members such as `hidden` carry over),
// drops the copied registrations, calls reset() to build new parameters and
// submodules, then copies the original's values into them.
#pragma once

#include <loom/nn/module.h>

#include <memory>
#include <optional>
#include <string>

namespace loom::nn {

template <class Self>
class Cloneable : public Module {
 public:
  explicit Cloneable(std::string type_name = "Module") : Module(std::move(type_name)) {}

  // Registers this module's parameters, buffers and submodules anew.
  virtual void reset() = 0;

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    auto copy = std::make_shared<Self>(static_cast<const Self&>(*this));
    copy->clear_registrations();
    copy->reset();
    copy->copy_state_from(*this, device);
    return copy;
  }
};

}  // namespace loom::nn
