// loom/serialize.h — loom::save and loom::load for modules, optimizers,
// tensors and lists of tensors, as libtorch's torch::save / torch::load:
//
//   loom::save(model, "model.pt");          // a module (holder or shared_ptr)
//   loom::load(model, "model.pt");          // values into its parameters and buffers
//   loom::save(optimizer, "optimizer.pt");  loom::load(optimizer, "optimizer.pt");
//   loom::save(tensor, "t.pt");             loom::load(tensor, "t.pt");
//   loom::save(std::vector<loom::Tensor>{a, b}, "v.pt");
//
// The files are PyTorch's checkpoint format: Python's torch.load gives the
// module's state dict, the tensor, or the list (so model.load_state_dict
// takes a C++-trained model), and loom::load reads what torch.save writes
// (a state dict for a module, a tensor, a list). An optimizer's file holds
// loom's optimizer state-dict layout (loom/optim/optimizer.h), not
// PyTorch's. The last arguments go to OutputArchive::save_to /
// InputArchive::load_from: a path, a stream, and for load a device.
#pragma once

#include <loom/nn/module.h>
#include <loom/optim/optimizer.h>
#include <loom/serialize/archive.h>

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace loom::serialize {

OutputArchive& operator<<(OutputArchive& archive, const Tensor& tensor);
OutputArchive& operator<<(OutputArchive& archive, const std::vector<Tensor>& tensors);
OutputArchive& operator<<(OutputArchive& archive, const nn::Module& module);
OutputArchive& operator<<(OutputArchive& archive, const optim::Optimizer& optimizer);
InputArchive& operator>>(InputArchive& archive, Tensor& tensor);
InputArchive& operator>>(InputArchive& archive, std::vector<Tensor>& tensors);
InputArchive& operator>>(InputArchive& archive, nn::Module& module);
InputArchive& operator>>(InputArchive& archive, optim::Optimizer& optimizer);

template <class Impl>
OutputArchive& operator<<(OutputArchive& archive, const nn::ModuleHolder<Impl>& module) {
  return archive << *module;
}
template <class Impl>
  requires std::is_base_of_v<nn::Module, Impl>
OutputArchive& operator<<(OutputArchive& archive, const std::shared_ptr<Impl>& module) {
  return archive << *module;
}
template <class Impl>
InputArchive& operator>>(InputArchive& archive, nn::ModuleHolder<Impl>& module) {
  return archive >> *module;
}
template <class Impl>
  requires std::is_base_of_v<nn::Module, Impl>
InputArchive& operator>>(InputArchive& archive, std::shared_ptr<Impl>& module) {
  return archive >> *module;
}

}  // namespace loom::serialize

namespace loom {

template <class Value, class... SaveToArgs>
void save(const Value& value, SaveToArgs&&... args) {
  serialize::OutputArchive archive;
  archive << value;
  archive.save_to(std::forward<SaveToArgs>(args)...);
}

template <class Value, class... LoadFromArgs>
void load(Value& value, LoadFromArgs&&... args) {
  serialize::InputArchive archive;
  archive.load_from(std::forward<LoadFromArgs>(args)...);
  archive >> value;
}

}  // namespace loom
