// module_state.cpp — Module::state_dict / load_state_dict and the in-place
// device and dtype conversions (Module::to).
#include <loom/nn/module.h>

#include <loom/autograd.h>

#include <sstream>
#include <unordered_set>

namespace loom::nn {

StateDict Module::state_dict() const {
  StateDict out;
  // PyTorch's order: each module's parameters, then its buffers, then its
  // children's — so walk module by module rather than parameters first.
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& m,
                                                                    const std::string& prefix) {
    for (const auto& e : m.parameters_) out.insert(prefix + e.name, e.tensor.detach());
    for (const auto& e : m.buffers_)
      if (e.persistent) out.insert(prefix + e.name, e.tensor.detach());
    for (const auto& [name, child] : m.children_) walk(*child, prefix + name + ".");
  };
  walk(*this, "");
  return out;
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  StateDict own = state_dict();  // detached handles sharing our memory
  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& [key, target] : own) {
    const Tensor* src = state.find(key);
    if (!src) {
      missing.push_back(key);
      continue;
    }
    if (!src->defined()) {
      mismatched.push_back("'" + key + "' is an undefined tensor in the state dict");
    } else if (!(src->sizes() == target.sizes())) {
      mismatched.push_back(loom::detail::cat("size mismatch for '", key, "': the state dict has ",
                                       shape_str(src->sizes()), ", the module ",
                                       shape_str(target.sizes())));
    } else if (src->dtype() != target.dtype()) {
      mismatched.push_back(loom::detail::cat("dtype mismatch for '", key, "': the state dict has ",
                                       loom::name(src->dtype()), ", the module ", loom::name(target.dtype()),
                                       " (convert the module or the tensor with to() first)"));
    }
  }
  for (const auto& [key, t] : state)
    if (!own.contains(key)) unexpected.push_back(key);

  const bool key_errors = strict && (!missing.empty() || !unexpected.empty());
  if (key_errors || !mismatched.empty()) {
    std::ostringstream msg;
    msg << "Error(s) in loading state_dict for " << name() << ":";
    auto list = [&](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      msg << "\n  " << what << " key(s):";
      for (size_t i = 0; i < keys.size(); ++i) msg << (i ? ", \"" : " \"") << keys[i] << "\"";
    };
    if (strict) {
      list("Missing", missing);
      list("Unexpected", unexpected);
    }
    for (const auto& m : mismatched) msg << "\n  " << m;
    throw Error(msg.str());
  }

  autograd::NoGradGuard no_grad;
  for (auto& [key, target] : own)
    if (const Tensor* src = state.find(key)) target.copy_(*src);
}

void Module::convert(const std::function<Tensor(const Tensor&)>& fn) {
  autograd::NoGradGuard no_grad;
  for (const auto& [name, child] : children_) child->convert(fn);
  for (auto& e : parameters_) {
    Tensor moved = fn(e.tensor);
    if (!moved.is_same(e.tensor)) e.tensor.set_data(moved);
    if (e.tensor.grad().defined()) {
      Tensor g = fn(e.tensor.grad());
      if (!g.is_same(e.tensor.grad())) e.tensor.mutable_grad() = g;
    }
  }
  for (auto& e : buffers_) {
    Tensor moved = fn(e.tensor);
    if (!moved.is_same(e.tensor)) e.tensor.set_data(moved);
  }
}

Module& Module::to(Device device) {
  convert([&](const Tensor& t) { return t.to(device); });
  return *this;
}

Module& Module::to(DType dtype) {
  LOOM_CHECK(is_floating_point(dtype), name(), ".to: modules convert to floating-point dtypes "
                                               "only, got ", loom::name(dtype));
  convert([&](const Tensor& t) { return t.is_floating_point() ? t.to(dtype) : t; });
  return *this;
}

Module& Module::to(Device device, DType dtype) {
  LOOM_CHECK(is_floating_point(dtype), name(), ".to: modules convert to floating-point dtypes "
                                               "only, got ", loom::name(dtype));
  convert([&](const Tensor& t) { return t.is_floating_point() ? t.to(device, dtype) : t.to(device); });
  return *this;
}

}  // namespace loom::nn

namespace loom::nn {

std::shared_ptr<Module> Module::clone(const std::optional<Device>&) const {
  throw Error("clone() is not implemented for " + name() + ": derive it from loom::nn::Cloneable<" + name() +
              "Impl> (and register its parameters and submodules in reset()) to make it cloneable");
}

void Module::clear_registrations() {
  parameters_.clear();
  buffers_.clear();
  children_.clear();
}

void Module::copy_state_from(const Module& source, const std::optional<Device>& device) {
  autograd::NoGradGuard no_grad;
  auto copy_entries = [&](std::vector<Entry>& into, const std::vector<Entry>& from, const char* what) {
    LOOM_CHECK(into.size() == from.size(), "clone: ", name(), " has ", into.size(), " ", what, "s after reset(), the original ",
               from.size(), " (reset() must build the same structure)");
    for (size_t i = 0; i < into.size(); ++i) {
      LOOM_CHECK(into[i].name == from[i].name && into[i].tensor.sizes() == from[i].tensor.sizes(), "clone: ", name(),
                 "'s ", what, " '", from[i].name, "' is rebuilt as '", into[i].name, "' of shape ",
                 shape_str(into[i].tensor.sizes()), " (the original's is ", shape_str(from[i].tensor.sizes()), ")");
      // A fresh tensor with the original's dtype and values (the new module's
      // own tensor object keeps its identity for its members).
      into[i].tensor.set_data(from[i].tensor.detach().clone());
      into[i].tensor.requires_grad_(from[i].tensor.requires_grad());
    }
  };
  copy_entries(parameters_, source.parameters_, "parameter");
  copy_entries(buffers_, source.buffers_, "buffer");
  LOOM_CHECK(children_.size() == source.children_.size(), "clone: ", name(), " has ", children_.size(),
             " submodules after reset(), the original ", source.children_.size());
  for (size_t i = 0; i < children_.size(); ++i) children_[i].second->copy_state_from(*source.children_[i].second, std::nullopt);
  training_ = source.training_;
  if (device) to(*device);
}

}  // namespace loom::nn
