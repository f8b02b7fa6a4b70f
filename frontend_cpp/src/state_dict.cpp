// state_dict.cpp — loom::StateDict (loom/state_dict.h).
#include <loom/error.h>
#include <loom/state_dict.h>

namespace loom {

void StateDict::insert(std::string name, Tensor tensor) {
  auto it = index_.find(name);
  if (it != index_.end()) {
    items_[it->second].second = std::move(tensor);
    return;
  }
  index_.emplace(name, items_.size());
  items_.emplace_back(std::move(name), std::move(tensor));
}

const Tensor* StateDict::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &items_[it->second].second;
}

Tensor* StateDict::find(std::string_view name) {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &items_[it->second].second;
}

const Tensor& StateDict::at(std::string_view name) const {
  const Tensor* t = find(name);
  LOOM_CHECK(t, "state dict has no entry '", name, "'");
  return *t;
}

Tensor& StateDict::at(std::string_view name) {
  Tensor* t = find(name);
  LOOM_CHECK(t, "state dict has no entry '", name, "'");
  return *t;
}

bool StateDict::erase(std::string_view name) {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return false;
  const size_t pos = it->second;
  items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(pos));
  index_.erase(it);
  for (auto& [key, p] : index_)
    if (p > pos) --p;
  return true;
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> k;
  k.reserve(items_.size());
  for (const auto& [name, t] : items_) k.push_back(name);
  return k;
}

}  // namespace loom
