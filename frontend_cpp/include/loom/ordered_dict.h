// loom/ordered_dict.h — OrderedDict: values by key in insertion order, what
// named_parameters(), named_buffers(), named_children() and named_modules()
// return (torch::OrderedDict).
//
//   for (const auto& p : net->named_parameters())
//     std::cout << p.key() << ": " << p.value().sizes() << "\n";
//   auto w = net->named_parameters()["fc.weight"];
//   for (const auto& [name, tensor] : net->named_parameters()) ...  // also works
//
// An Item is also a pair: first is the key, second the value.
#pragma once

#include <loom/error.h>

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace loom {

template <class Key, class Value>
class OrderedDict {
 public:
  struct Item {
    Item(Key key, Value value) : first(std::move(key)), second(std::move(value)) {}
    const Key& key() const { return first; }
    Value& value() { return second; }
    const Value& value() const { return second; }
    std::pair<Key, Value> pair() const { return {first, second}; }
    Value& operator*() { return second; }
    const Value& operator*() const { return second; }
    Value* operator->() { return &second; }
    const Value* operator->() const { return &second; }
    Key first;
    Value second;
  };
  using Iterator = typename std::vector<Item>::iterator;
  using ConstIterator = typename std::vector<Item>::const_iterator;

  // `key_description` names the keys in errors ("Key", "Parameter", ...).
  explicit OrderedDict(std::string key_description = "Key") : key_description_(std::move(key_description)) {}

  // Adds `key`; an error when it is already there.
  Value& insert(Key key, Value value) {
    LOOM_CHECK(index_.count(key) == 0, key_description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }
  // Adds `key` or replaces its value (keeping its position).
  Value& insert_or_assign(Key key, Value value) {
    if (Value* v = find(key)) return *v = std::move(value);
    return insert(std::move(key), std::move(value));
  }
  void update(const OrderedDict& other) {
    for (const Item& item : other) insert_or_assign(item.first, item.second);
  }

  // The value of `key`; an error naming it when absent.
  Value& operator[](const Key& key) { return at(key); }
  const Value& operator[](const Key& key) const { return at(key); }
  Value& at(const Key& key) {
    Value* v = find(key);
    LOOM_CHECK(v, key_description_, " '", key, "' is not defined");
    return *v;
  }
  const Value& at(const Key& key) const { return const_cast<OrderedDict*>(this)->at(key); }
  // The item at `index` (insertion order).
  Item& operator[](size_t index) {
    LOOM_CHECK(index < items_.size(), "OrderedDict: index ", index, " is out of range for ", items_.size(), " items");
    return items_[index];
  }
  const Item& operator[](size_t index) const { return const_cast<OrderedDict*>(this)->operator[](index); }
  // nullptr when absent.
  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  const Value* find(const Key& key) const { return const_cast<OrderedDict*>(this)->find(key); }
  bool contains(const Key& key) const { return index_.count(key) != 0; }

  void erase(const Key& key) {
    auto it = index_.find(key);
    LOOM_CHECK(it != index_.end(), key_description_, " '", key, "' is not defined");
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(it->second));
    reindex();
  }
  void clear() {
    items_.clear();
    index_.clear();
  }
  void reserve(size_t n) {
    items_.reserve(n);
    index_.reserve(n);
  }

  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  bool empty() const { return items_.empty(); }
  Item& front() { return (*this)[size_t{0}]; }
  Item& back() { return (*this)[items_.empty() ? size_t{0} : items_.size() - 1]; }
  Iterator begin() { return items_.begin(); }
  Iterator end() { return items_.end(); }
  ConstIterator begin() const { return items_.begin(); }
  ConstIterator end() const { return items_.end(); }

  const std::vector<Item>& items() const { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(items_.size());
    for (const Item& item : items_) out.push_back(item.first);
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(items_.size());
    for (const Item& item : items_) out.push_back(item.second);
    return out;
  }
  const std::string& key_description() const { return key_description_; }

 private:
  void reindex() {
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
  }
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
  std::string key_description_;
};

}  // namespace loom
