// values.cpp — what loom::save / loom::load write and read for each kind
// of value (loom/serialize.h), and Module::save / Module::load.
#include <loom/autograd.h>
#include <loom/error.h>
#include <loom/serialize.h>

#include <string>

namespace loom::serialize {

OutputArchive& operator<<(OutputArchive& archive, const Tensor& tensor) {
  archive.write("0", tensor);
  archive.set_top_level(io::TorchTopLevel::Tensor);
  return archive;
}

OutputArchive& operator<<(OutputArchive& archive, const std::vector<Tensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) archive.write(std::to_string(i), tensors[i]);
  archive.set_top_level(io::TorchTopLevel::List);
  return archive;
}

OutputArchive& operator<<(OutputArchive& archive, const nn::Module& module) {
  module.save(archive);
  return archive;
}

OutputArchive& operator<<(OutputArchive& archive, const optim::Optimizer& optimizer) {
  for (const auto& [key, t] : optimizer.state_dict()) archive.write(key, t);
  return archive;
}

// A file of one tensor flattens to the key "" (loom's and torch.save's);
// a dict with a single entry is read as that tensor too.
InputArchive& operator>>(InputArchive& archive, Tensor& tensor) {
  const StateDict& e = archive.entries();
  LOOM_CHECK(e.size() == 1, "load: expected a file holding one tensor, it holds ", e.size(), " (keys: ",
             [&] {
               std::string k;
               for (const auto& key : e.keys()) k += (k.empty() ? "" : ", ") + key;
               return k;
             }(),
             ")");
  tensor = e.begin()->second;
  return archive;
}

InputArchive& operator>>(InputArchive& archive, std::vector<Tensor>& tensors) {
  tensors.clear();
  for (size_t i = 0;; ++i) {
    const Tensor* t = archive.entries().find(std::to_string(i));
    if (!t) break;
    tensors.push_back(*t);
  }
  LOOM_CHECK(tensors.size() == archive.entries().size(), "load: expected a list of tensors (keys 0, 1, ...); the file ",
             "holds ", archive.entries().size(), " entries of which ", tensors.size(), " are numbered");
  return archive;
}

InputArchive& operator>>(InputArchive& archive, nn::Module& module) {
  module.load(archive);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, optim::Optimizer& optimizer) {
  optimizer.load_state_dict(archive.entries());
  return archive;
}

}  // namespace loom::serialize

namespace loom::nn {

void Module::save(serialize::OutputArchive& archive) const {
  for (const auto& [key, t] : state_dict()) archive.write(key, t);
}

void Module::load(serialize::InputArchive& archive) {
  autograd::NoGradGuard no_grad;
  for (auto& [key, target] : state_dict()) {
    Tensor stored;
    archive.read(key, stored);
    LOOM_CHECK(stored.sizes() == target.sizes(), "load: size mismatch for '", key, "': the file has ",
               shape_str(stored.sizes()), ", the module ", shape_str(target.sizes()));
    target.copy_(stored);
  }
}

}  // namespace loom::nn
