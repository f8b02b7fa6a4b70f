// loom/nn/holder.h — module holders and option builders (libtorch's
// TORCH_MODULE and TORCH_ARG ideas).
//
//   struct LinearImpl : Module { ... };
//   LOOM_MODULE(Linear);           // Linear holds a shared_ptr<LinearImpl>
//   Linear fc(LinearOptions(64, 256).bias(false));
//   Linear same = fc;              // reference semantics: one module
//   fc->weight;  fc(x);            // -> for members, () for forward
//   Linear empty{nullptr};         // no module yet
#pragma once

#include <loom/error.h>
#include <loom/options.h>
#include <loom/tensor.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>

namespace loom::nn {

// A shared_ptr to a module implementation with the module's own
// constructors: copying a holder shares the module, as in Python.
template <class Impl>
class ModuleHolder {
 public:
  using ContainedType = Impl;

  // Empty: `Linear fc{nullptr};` (assign a module later).
  ModuleHolder(std::nullptr_t) {}  // NOLINT
  // Builds a new Impl from the arguments (the Impl's constructors, so
  // `Linear(64, 256)` and `Linear(LinearOptions(64, 256))` both work).
  // (Never a copy: one holder argument of this type is copied, not nested.)
  template <class... Args>
    requires(std::is_constructible_v<Impl, Args && ...> &&
             !(sizeof...(Args) == 1 && (std::is_base_of_v<ModuleHolder, std::decay_t<Args>> && ...)))
  ModuleHolder(Args&&... args)  // NOLINT: implicit, like libtorch's holders
      : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}
  // Takes an existing module (of Impl or a subclass).
  template <class Derived>
    requires std::is_base_of_v<Impl, Derived>
  ModuleHolder(std::shared_ptr<Derived> module) : impl_(std::move(module)) {}  // NOLINT

  Impl* operator->() const { return checked(); }
  Impl& operator*() const { return *checked(); }
  Impl* get() const { return checked(); }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }

  // Calls the module's forward.
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return checked()->forward(std::forward<Args>(args)...);
  }
  // The module's operator[] (seq[0], list[i], dict["key"]).
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*checked())[std::forward<Arg>(arg)];
  }

 private:
  Impl* checked() const {
    LOOM_CHECK(impl_, "use of an empty module holder (made with nullptr and never assigned)");
    return impl_.get();
  }
  std::shared_ptr<Impl> impl_;
};

// Values of one int64 per spatial dimension that also accept a single
// number for all of them: Conv2dOptions(1, 32, 3) or (1, 32, {3, 5}).
template <size_t D>
class ExpandingArray {
 public:
  ExpandingArray(int64_t v) { values_.fill(v); }  // NOLINT
  ExpandingArray(std::initializer_list<int64_t> list) {  // NOLINT
    LOOM_CHECK(list.size() == D, "expected ", D, " values (one per spatial dimension), got ",
               list.size());
    std::copy(list.begin(), list.end(), values_.begin());
  }
  operator IntArrayRef() const { return IntArrayRef(values_.data(), D); }  // NOLINT
  int64_t operator[](size_t i) const { return values_[i]; }
  const std::array<int64_t, D>& values() const { return values_; }
  bool operator==(const ExpandingArray&) const = default;

 private:
  std::array<int64_t, D> values_{};
};

}  // namespace loom::nn

// LOOM_MODULE(Name): declares holder `Name` of `NameImpl`.
#define LOOM_MODULE(Name)                                    \
  class Name : public ::loom::nn::ModuleHolder<Name##Impl> { \
   public:                                                   \
    using ::loom::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }

