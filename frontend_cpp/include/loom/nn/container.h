// loom/nn/container.h — Sequential, ModuleList, ModuleDict and Functional.
//
//   loom::nn::Sequential net(loom::nn::Linear(4, 8), loom::nn::ReLU(), loom::nn::Linear(8, 2));
//   net->push_back(loom::nn::Softmax(1));
//   auto y = net(x);                              // each module's forward in turn
//   auto fc = net->at<loom::nn::LinearImpl>(0);   // typed access; net[0] untyped
//
// Children are named "0", "1", ... (ModuleDict: by key), so state_dict keys
// are PyTorch's ("0.weight").
#pragma once

#include <loom/nn/any.h>
#include <loom/nn/module.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace loom::nn {

// A module made from a function (a lambda in a Sequential), optionally
// with arguments bound after the input, as libtorch's:
//   Functional(loom::relu);  Functional(loom::leaky_relu, 0.2);
//   Functional([](const Tensor& x) { return x * 2; });
class FunctionalImpl : public Module {
 public:
  using Function = std::function<Tensor(const Tensor&)>;
  explicit FunctionalImpl(Function fn) : Module("Functional"), fn_(std::move(fn)) {}
  template <class Fn, class... Bound>
    requires(sizeof...(Bound) > 0 && std::is_invocable_v<Fn, const Tensor&, Bound...>)
  FunctionalImpl(Fn fn, Bound... bound)
      : Module("Functional"), fn_([fn, bound...](const Tensor& input) -> Tensor { return fn(input, bound...); }) {}
  Tensor forward(const Tensor& input) { return fn_(input); }
  std::shared_ptr<Module> clone(const std::optional<Device>& = std::nullopt) const override {
    return std::make_shared<FunctionalImpl>(fn_);
  }

 private:
  Function fn_;
};
LOOM_MODULE(Functional);

// Applies its modules in order; each must have forward(const Tensor&).
class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  template <class... Modules>
    requires(sizeof...(Modules) > 0)
  explicit SequentialImpl(Modules&&... modules) : Module("Sequential") {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  // Appends a module (holder or shared_ptr) with a unary Tensor forward.
  template <class M>
    requires(!std::is_same_v<std::remove_cvref_t<M>, AnyModule>)
  void push_back(M&& module) {
    auto ptr = detail::module_ptr(module);
    auto impl = std::static_pointer_cast<typename std::remove_cvref_t<decltype(*module)>>(ptr);
    static_assert(requires { impl->forward(std::declval<Tensor>()); },
                  "Sequential: the module needs forward(const Tensor&) returning a Tensor");
    using Impl = typename std::remove_cvref_t<decltype(*module)>;
    append(std::move(ptr), [](const std::shared_ptr<Module>& m) -> Forward {
      auto typed = std::static_pointer_cast<Impl>(m);
      return [typed](const Tensor& x) -> Tensor { return typed->forward(x); };
    });
  }
  void push_back(FunctionalImpl::Function fn) { push_back(Functional(std::move(fn))); }
  // A module behind an AnyModule (its forward must take and return one Tensor).
  void push_back(const AnyModule& any) {
    append(any.ptr(), [any](const std::shared_ptr<Module>& m) -> Forward {
      AnyModule bound = any.with_module(m);
      return [bound](const Tensor& x) mutable -> Tensor { return bound.forward(x); };
    });
  }

  Tensor forward(const Tensor& input);
  // Clones every module in turn.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  size_t size() const { return forwards_.size(); }
  bool empty() const { return forwards_.empty(); }
  // The i-th module, untyped; negative counts from the end.
  std::shared_ptr<Module> operator[](int64_t index) const;
  std::shared_ptr<Module> ptr(int64_t index) const { return (*this)[index]; }
  // The i-th module as T (an error naming both types when it is not one).
  template <class T>
  std::shared_ptr<T> at(int64_t index) const {
    auto m = std::dynamic_pointer_cast<T>((*this)[index]);
    LOOM_CHECK(m, "Sequential: module ", index, " is a ", (*this)[index]->name(),
               ", not the type asked for");
    return m;
  }

 private:
  using Forward = std::function<Tensor(const Tensor&)>;
  // Makes the forward of a module of the pushed type (this one's or a clone's).
  using BindForward = std::function<Forward(const std::shared_ptr<Module>&)>;
  void append(std::shared_ptr<Module> module, BindForward bind);
  std::vector<Forward> forwards_;
  std::vector<BindForward> binders_;
};
LOOM_MODULE(Sequential);

// Holds modules (any forward) in a list, registered as "0", "1", ...
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  template <class... Modules>
    requires(sizeof...(Modules) > 0)
  explicit ModuleListImpl(Modules&&... modules) : Module("ModuleList") {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  template <class M>
  void push_back(M&& module) {
    append(detail::module_ptr(module));
  }
  size_t size() const { return named_children().size(); }
  bool empty() const { return size() == 0; }
  std::shared_ptr<Module> operator[](int64_t index) const;
  template <class T>
  std::shared_ptr<T> at(int64_t index) const {
    auto m = std::dynamic_pointer_cast<T>((*this)[index]);
    LOOM_CHECK(m, "ModuleList: module ", index, " is a ", (*this)[index]->name(),
               ", not the type asked for");
    return m;
  }
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return list_.begin(); }
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return list_.end(); }

 private:
  void append(std::shared_ptr<Module> module);
  std::vector<std::shared_ptr<Module>> list_;
};
LOOM_MODULE(ModuleList);

// Holds modules by name, in insertion order.
class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() : Module("ModuleDict") {}
  template <class M>
  void insert(const std::string& key, M&& module) {
    add(key, detail::module_ptr(module));
  }
  bool contains(const std::string& key) const;
  // An error naming the key and the keys there are when absent.
  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <class T>
  std::shared_ptr<T> at(const std::string& key) const {
    auto m = std::dynamic_pointer_cast<T>((*this)[key]);
    LOOM_CHECK(m, "ModuleDict: module '", key, "' is a ", (*this)[key]->name(),
               ", not the type asked for");
    return m;
  }
  std::vector<std::string> keys() const;
  size_t size() const { return named_children().size(); }
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;

 private:
  void add(const std::string& key, std::shared_ptr<Module> module);
};
LOOM_MODULE(ModuleDict);

}  // namespace loom::nn
