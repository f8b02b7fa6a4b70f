// loom/state_dict.h — an ordered name -> tensor map: what Module::state_dict()
// and Optimizer::state_dict() return and what loom::io saves as safetensors.
//
//   loom::StateDict sd;
//   sd.insert("fc1.weight", w);
//   for (const auto& [name, t] : sd) ...
//   sd.at("fc1.bias");   // throws loom::Error naming the missing key
//
// Entries keep insertion order (the order a module registers its
// parameters), so files and iteration are reproducible.
#pragma once

#include <loom/tensor.h>

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace loom {

class StateDict {
 public:
  using Item = std::pair<std::string, Tensor>;

  // Adds `name`, or replaces its tensor in place (keeping its position).
  void insert(std::string name, Tensor tensor);
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  // nullptr when absent.
  const Tensor* find(std::string_view name) const;
  Tensor* find(std::string_view name);
  // Throws loom::Error naming `name` when absent.
  const Tensor& at(std::string_view name) const;
  Tensor& at(std::string_view name);
  // Removes `name`; returns whether it was there.
  bool erase(std::string_view name);

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::vector<std::string> keys() const;
  std::vector<Item>::const_iterator begin() const { return items_.begin(); }
  std::vector<Item>::const_iterator end() const { return items_.end(); }
  std::vector<Item>::iterator begin() { return items_.begin(); }
  std::vector<Item>::iterator end() { return items_.end(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, size_t> index_;  // name -> position in items_
};

// String metadata stored beside the tensors (safetensors' "__metadata__").
using Metadata = std::map<std::string, std::string>;

}  // namespace loom
