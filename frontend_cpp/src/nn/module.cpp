// module.cpp — loom::nn::Module: registration, traversal, mode, printing
// (state and conversions are in module_state.cpp).
#include <loom/detail/type_name.h>
#include <loom/nn/module.h>

#include <loom/autograd.h>

#include <sstream>

namespace loom::nn {

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}

std::string Module::name() const {
  if (!type_name_.empty()) return type_name_;
  std::string own = loom::detail::unqualified_type_name(typeid(*this));
  if (own.size() > 4 && own.ends_with("Impl")) own.resize(own.size() - 4);
  return own;
}

void Module::check_new_name(const std::string& name, const char* what) const {
  LOOM_CHECK(!name.empty(), this->name(), ": a ", what, " name can't be empty");
  LOOM_CHECK(name.find('.') == std::string::npos, this->name(), ": ", what, " name '", name,
             "' can't contain '.' (dots separate the levels of state_dict keys)");
  bool taken = false;
  for (const auto& e : parameters_) taken |= e.name == name;
  for (const auto& e : buffers_) taken |= e.name == name;
  for (const auto& c : children_) taken |= c.first == name;
  LOOM_CHECK(!taken, this->name(), ": '",
             name, "' is already registered (as a parameter, buffer or submodule)");
}

Tensor Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_new_name(name, "parameter");
  if (!tensor.defined()) return tensor;
  LOOM_CHECK(tensor.is_leaf(), this->name(), ": parameter '", name,
             "' must be a leaf tensor (detach() it first); it has grad_fn ", tensor.grad_fn()->name());
  if (requires_grad && tensor.is_floating_point()) tensor.requires_grad_(true);
  parameters_.push_back({std::move(name), tensor, true});
  return tensor;
}

Tensor Module::register_buffer(std::string name, Tensor tensor, bool persistent) {
  check_new_name(name, "buffer");
  if (!tensor.defined()) return tensor;
  buffers_.push_back({std::move(name), tensor, persistent});
  return tensor;
}

void Module::add_child(std::string name, std::shared_ptr<Module> module) {
  check_new_name(name, "submodule");
  LOOM_CHECK(module, this->name(), ": submodule '", name, "' is empty (a holder made with nullptr)");
  LOOM_CHECK(module.get() != this, this->name(), ": a module can't be its own submodule");
  children_.insert(std::move(name), std::move(module));
}

void Module::collect(const std::string& prefix, bool recurse, bool want_buffers,
                     bool persistent_only, NamedTensors& out) const {
  for (const auto& e : want_buffers ? buffers_ : parameters_)
    if (!persistent_only || e.persistent) out.insert(prefix + e.name, e.tensor);
  if (!recurse) return;
  for (const auto& [name, child] : children_)
    child->collect(prefix + name + ".", true, want_buffers, persistent_only, out);
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out("Parameter");
  collect("", recurse, false, false, out);
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out("Buffer");
  collect("", recurse, true, false, out);
  return out;
}

namespace {
std::vector<Tensor> values_of(const NamedTensors& named) {
  std::vector<Tensor> out;
  out.reserve(named.size());
  for (const auto& [name, t] : named) out.push_back(t);
  return out;
}
}  // namespace

std::vector<Tensor> Module::parameters(bool recurse) const { return values_of(named_parameters(recurse)); }
std::vector<Tensor> Module::buffers(bool recurse) const { return values_of(named_buffers(recurse)); }

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [name, child] : children_) out.push_back(child);
  return out;
}

void Module::collect_modules(const std::string& prefix, NamedModules& out) {
  for (const auto& [name, child] : children_) {
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    out.insert(path, child);
    child->collect_modules(path, out);
  }
}

NamedModules Module::named_modules() {
  NamedModules out("Module");
  // A module made on the stack has no shared_ptr owner: list it without one
  // (an aliasing pointer that owns nothing).
  std::shared_ptr<Module> self = weak_from_this().lock();
  if (!self) self = std::shared_ptr<Module>(std::shared_ptr<Module>(), this);
  out.insert("", std::move(self));
  collect_modules("", out);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules() {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [name, m] : named_modules()) out.push_back(std::move(m));
  return out;
}

Module& Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& [name, child] : children_) child->apply(fn);
  fn(*this);
  return *this;
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad(bool set_to_none) {
  autograd::NoGradGuard no_grad;
  for (Tensor& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none)
      p.mutable_grad() = Tensor();
    else
      p.mutable_grad().zero_();
  }
}

void Module::pretty_print(std::ostream& os, int indent) const {
  os << name() << "(" << extra_repr();
  if (children_.empty()) {
    os << ")";
    return;
  }
  const std::string pad(static_cast<size_t>(indent) + 2, ' ');
  os << "\n";
  for (const auto& [name, child] : children_) {
    os << pad << "(" << name << "): ";
    child->pretty_print(os, indent + 2);
    os << "\n";
  }
  os << std::string(static_cast<size_t>(indent), ' ') << ")";
}

std::ostream& operator<<(std::ostream& os, const Module& module) {
  module.pretty_print(os);
  return os;
}

}  // namespace loom::nn
