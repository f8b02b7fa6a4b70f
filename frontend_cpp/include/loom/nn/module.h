// loom/nn/module.h — the base of every layer: a tree of named parameters,
// buffers and submodules (torch::nn::Module, with PyTorch's state_dict keys).
//
//   struct NetImpl : loom::nn::Module {
//     NetImpl() : Module("Net") {
//       fc = register_module("fc", loom::nn::Linear(4, 2));
//       scale = register_parameter("scale", loom::ones({2}));
//     }
//     loom::Tensor forward(const loom::Tensor& x) { return fc(x) * scale; }
//     loom::nn::Linear fc{nullptr};
//     loom::Tensor scale;
//   };
//   LOOM_MODULE(Net);
//
// Tensors are handles, so the member `scale` and the registered entry are
// the same tensor. Module::to() changes parameters in place (set_data), so
// those handles — and optimizers holding them — follow the move.
#pragma once

#include <loom/device.h>
#include <loom/dtype.h>
#include <loom/nn/holder.h>
#include <loom/ordered_dict.h>
#include <loom/state_dict.h>
#include <loom/tensor.h>

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace loom::serialize {
class OutputArchive;
class InputArchive;
}  // namespace loom::serialize

namespace loom::nn {

class Module;

// (name, tensor) items in registration order; names are dotted paths.
using NamedTensors = OrderedDict<std::string, Tensor>;
using NamedModules = OrderedDict<std::string, std::shared_ptr<Module>>;

namespace detail {
// The module type behind T: T::ContainedType for a holder, else T.
template <class T>
struct ContainedModule {
  using type = T;
};
template <class T>
  requires requires { typename T::ContainedType; }
struct ContainedModule<T> {
  using type = typename T::ContainedType;
};
// The module inside a holder or a shared_ptr.
template <class M>
std::shared_ptr<Module> module_ptr(const M& m) {
  if constexpr (requires { m.ptr(); })
    return m.ptr();
  else
    return m;
}
}  // namespace detail

class Module : public std::enable_shared_from_this<Module> {
 public:
  // `type_name` is what printing shows ("Linear"); by default the class's
  // own name without namespaces or a trailing "Impl" (NetImpl prints as
  // "Net"), as libtorch names modules.
  explicit Module(std::string type_name = "");
  virtual ~Module() = default;
  Module& operator=(const Module&) = delete;

  std::string name() const;

  // ---- registration (each returns what it registered) -------------------------
  // A parameter: a leaf that requires grad (when `requires_grad` and the
  // dtype is floating). An undefined tensor registers nothing (an absent
  // bias, PyTorch's None). Names must be new, non-empty and dot-free.
  Tensor register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  // A buffer: state that is not trained (running means, counters). Non-
  // persistent buffers are moved by to() but left out of state_dict().
  Tensor register_buffer(std::string name, Tensor tensor, bool persistent = true);
  // A submodule, given as a holder or a shared_ptr; returns it as given.
  template <class Holder>
    requires std::is_base_of_v<ModuleHolder<typename Holder::ContainedType>, Holder>
  Holder register_module(std::string name, Holder holder) {
    add_child(std::move(name), holder.ptr());
    return holder;
  }
  template <class M>
    requires std::is_base_of_v<Module, M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    add_child(std::move(name), module);
    return module;
  }

  // ---- traversal -------------------------------------------------------------------
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  const NamedModules& named_children() const { return children_; }
  // This module (first, named "") and every descendant, depth first.
  std::vector<std::shared_ptr<Module>> modules();
  NamedModules named_modules();
  // Calls fn on every submodule (children first) and then on this one.
  Module& apply(const std::function<void(Module&)>& fn);

  // ---- mode ---------------------------------------------------------------------------
  // Training mode (dropout active, batch norm uses and updates batch
  // statistics) for this module and all descendants.
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // ---- device and dtype ---------------------------------------------------------------
  // Moves / casts every parameter, gradient and buffer in place (dtype
  // changes only floating-point tensors, as PyTorch). Tensor identities
  // are kept, so optimizers built before the move still work.
  Module& to(Device device);
  Module& to(DType dtype);
  Module& to(Device device, DType dtype);

  // Clears every parameter's .grad (set_to_none) or fills it with zeros.
  void zero_grad(bool set_to_none = true);

  // ---- state ----------------------------------------------------------------------------
  // Parameters and persistent buffers under PyTorch's keys ("0.weight",
  // "bn.running_mean"); the tensors share memory with the module (detached).
  StateDict state_dict() const;
  // Copies every entry into the module's tensor of that key (under
  // no-grad, in place). Shapes and dtypes must match; `strict` also
  // requires the same key set. Every problem is listed in one loom::Error.
  void load_state_dict(const StateDict& state, bool strict = true);

  // ---- archives (loom/serialize.h) ----------------------------------------------------------
  // Writes every parameter and persistent buffer under its state_dict key.
  virtual void save(serialize::OutputArchive& archive) const;
  // Reads every parameter and persistent buffer from its state_dict key
  // into the module's tensor (in place, under no-grad, converted to its
  // dtype and device); a missing key or another shape is an error naming
  // it. Entries the module does not have are ignored, as libtorch does.
  virtual void load(serialize::InputArchive& archive);

  // ---- copies and types -----------------------------------------------------------------
  // A deep copy: new parameters and buffers holding this module's values
  // (on `device` when given), new submodules, the same training mode.
  // Built-in modules have it; a module of one's own gets it by deriving
  // Cloneable<Self> (loom/nn/cloneable.h); others throw.
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;
  // This module as M (an Impl type or its holder: as<Linear>() gives a
  // LinearImpl*), nullptr when it is not one.
  template <class M>
  typename detail::ContainedModule<M>::type* as() noexcept {
    return dynamic_cast<typename detail::ContainedModule<M>::type*>(this);
  }
  template <class M>
  const typename detail::ContainedModule<M>::type* as() const noexcept {
    return dynamic_cast<const typename detail::ContainedModule<M>::type*>(this);
  }

  // ---- printing -------------------------------------------------------------------------
  // What goes between the parentheses of this module's line
  // ("in_features=4, out_features=2, bias=true"); empty by default.
  virtual std::string extra_repr() const { return ""; }
  // PyTorch-style multi-line repr of the tree.
  void pretty_print(std::ostream& os, int indent = 0) const;

 protected:
  // For clone(): copies the registrations too (Cloneable drops and rebuilds them).
  Module(const Module&) = default;
  // Copies the value of every parameter and buffer of `source`, a module of
  // the same structure, into this one, and each submodule's training mode;
  // then moves this module to `device` when given.
  void copy_state_from(const Module& source, const std::optional<Device>& device);
  // Forgets every parameter, buffer and submodule (before Cloneable's reset()).
  void clear_registrations();

  bool training_ = true;

 private:
  struct Entry {
    std::string name;
    Tensor tensor;
    bool persistent = true;
  };
  void add_child(std::string name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name, const char* what) const;
  void collect(const std::string& prefix, bool recurse, bool want_buffers, bool persistent_only,
               NamedTensors& out) const;
  void collect_modules(const std::string& prefix, NamedModules& out);
  // Applies fn to every parameter/buffer tensor, replacing its data in place.
  void convert(const std::function<Tensor(const Tensor&)>& fn);

  std::string type_name_;
  std::vector<Entry> parameters_;
  std::vector<Entry> buffers_;
  NamedModules children_{"Submodule"};
};

// clone() for a built-in module whose options say everything about its
// structure: a new one from the options, then the values copied over.
#define LOOM_CLONE_FROM_OPTIONS(Impl)                                                                   \
  std::shared_ptr<::loom::nn::Module> clone(const std::optional<::loom::Device>& device = std::nullopt) \
      const override {                                                                                  \
    auto copy = std::make_shared<Impl>(this->options);                                                  \
    copy->copy_state_from(*this, device);                                                               \
    return copy;                                                                                        \
  }
// clone() for a built-in module with no options and no state (ReLU).
#define LOOM_CLONE_STATELESS(Impl)                                                                      \
  std::shared_ptr<::loom::nn::Module> clone(const std::optional<::loom::Device>& = std::nullopt) const override { \
    auto copy = std::make_shared<Impl>();                                                               \
    copy->train(this->is_training());                                                                   \
    return copy;                                                                                        \
  }

std::ostream& operator<<(std::ostream& os, const Module& module);
template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& holder) {
  return os << *holder;
}

}  // namespace loom::nn
