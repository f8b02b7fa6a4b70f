// container.cpp — Sequential, ModuleList, ModuleDict (loom/nn/container.h).
#include <loom/nn/container.h>

namespace loom::nn {

namespace {
// `index` (negative counts from the end) checked against `size`.
size_t checked_index(const char* what, int64_t index, size_t size) {
  const int64_t n = static_cast<int64_t>(size);
  LOOM_CHECK(index >= -n && index < n, what, ": index ", index, " is out of range for ", n,
             " modules");
  return static_cast<size_t>(index < 0 ? index + n : index);
}
}  // namespace

void SequentialImpl::append(std::shared_ptr<Module> module, BindForward bind) {
  forwards_.push_back(bind(module));
  binders_.push_back(bind);
  register_module(std::to_string(forwards_.size() - 1), std::move(module));
}

std::shared_ptr<Module> SequentialImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<SequentialImpl>();
  for (size_t i = 0; i < forwards_.size(); ++i) copy->append(named_children()[i].second->clone(device), binders_[i]);
  copy->training_ = training_;
  return copy;
}

std::shared_ptr<Module> ModuleListImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleListImpl>();
  for (const auto& m : list_) copy->append(m->clone(device));
  copy->training_ = training_;
  return copy;
}

std::shared_ptr<Module> ModuleDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (const auto& [key, m] : named_children()) copy->add(key, m->clone(device));
  copy->training_ = training_;
  return copy;
}

Tensor SequentialImpl::forward(const Tensor& input) {
  LOOM_CHECK(!forwards_.empty(), "Sequential: forward of an empty Sequential");
  Tensor x = input;
  for (const auto& f : forwards_) x = f(x);
  return x;
}

std::shared_ptr<Module> SequentialImpl::operator[](int64_t index) const {
  return named_children()[checked_index("Sequential", index, size())].second;
}

void ModuleListImpl::append(std::shared_ptr<Module> module) {
  register_module(std::to_string(list_.size()), module);
  list_.push_back(std::move(module));
}

std::shared_ptr<Module> ModuleListImpl::operator[](int64_t index) const {
  return list_[checked_index("ModuleList", index, list_.size())];
}

void ModuleDictImpl::add(const std::string& key, std::shared_ptr<Module> module) {
  LOOM_CHECK(!contains(key), "ModuleDict: key '", key, "' is already there");
  register_module(key, std::move(module));
}

bool ModuleDictImpl::contains(const std::string& key) const { return named_children().contains(key); }

std::vector<std::string> ModuleDictImpl::keys() const {
  std::vector<std::string> out;
  for (const auto& [name, m] : named_children()) out.push_back(name);
  return out;
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  for (const auto& [name, m] : named_children())
    if (name == key) return m;
  std::string known;
  for (const auto& k : keys()) known += (known.empty() ? "" : ", ") + k;
  throw Error(loom::detail::cat("ModuleDict: no module '", key, "' (keys: ", known, ")"));
}

}  // namespace loom::nn
