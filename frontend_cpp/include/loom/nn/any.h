// loom/nn/any.h — AnyModule: a module of any type behind one type
// (torch::nn::AnyModule), called through its forward with the arguments it
// takes:
//
//   loom::nn::AnyModule any(loom::nn::Linear(3, 4));
//   loom::Tensor y = any.forward(x);                 // a Tensor result
//   auto [out, state] = lstm_any.forward<std::tuple<Tensor, std::tuple<Tensor, Tensor>>>(x);
//   auto* linear = any.get<loom::nn::LinearImpl>();  // back to the type
//
// The module's forward must not be overloaded. Arguments are matched by
// their decayed types and must be exactly what forward takes (an int for
// an int64_t parameter is an error naming both types). Trailing arguments
// may be left out where the module lists their defaults, as the recurrent
// layers, attention and the transformer layers do:
//
//   static std::vector<std::any> forward_default_args() { return {std::any(loom::Tensor())}; }
//
// (one value per trailing parameter of forward, of that parameter's
// decayed type; libtorch's FORWARD_HAS_DEFAULT_ARGS).
#pragma once

#include <loom/detail/type_name.h>
#include <loom/error.h>
#include <loom/nn/module.h>

#include <algorithm>
#include <any>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace loom::nn {

namespace detail {
inline std::string demangled(const std::type_info& t) { return loom::detail::type_name(t); }
}  // namespace detail

class AnyModule {
 public:
  AnyModule() = default;
  // A holder (Linear) or a shared_ptr to a module.
  template <class M>
    requires(!std::is_same_v<std::decay_t<M>, AnyModule>)
  explicit AnyModule(M module) {
    auto ptr = nn::detail::module_ptr(module);
    using Impl = std::remove_cvref_t<decltype(*module)>;
    set<Impl>(std::static_pointer_cast<Impl>(ptr));
  }

  // Calls forward with `args` and returns its result as ReturnType.
  template <class ReturnType = Tensor, class... Args>
  ReturnType forward(Args&&... args) {
    LOOM_CHECK(module_, "AnyModule: forward() on an empty AnyModule");
    std::vector<std::any> packed{std::any(std::decay_t<Args>(std::forward<Args>(args)))...};
    std::any result = call_(*module_, packed);
    if constexpr (std::is_void_v<ReturnType>) {
      return;
    } else {
      const ReturnType* r = std::any_cast<ReturnType>(&result);
      LOOM_CHECK(r, "AnyModule: ", module_->name(), "'s forward returns ", detail::demangled(result.type()),
                 ", not the ", detail::demangled(typeid(ReturnType)), " asked for (forward<T>(...) names the type)");
      return *r;
    }
  }

  std::shared_ptr<Module> ptr() const { return module_; }
  template <class T>
  std::shared_ptr<typename nn::detail::ContainedModule<T>::type> ptr() const {
    auto p = std::dynamic_pointer_cast<typename nn::detail::ContainedModule<T>::type>(module_);
    LOOM_CHECK(p, "AnyModule: the module is a ", module_ ? module_->name() : "nothing", ", not ",
               detail::demangled(typeid(T)));
    return p;
  }
  // The module as T: a reference for an Impl type (get<LinearImpl>()),
  // a holder sharing the module for a holder type (get<Linear>()).
  template <class T>
  decltype(auto) get() const {
    if constexpr (requires { typename T::ContainedType; })
      return T(ptr<T>());
    else
      return static_cast<T&>(*ptr<T>());
  }
  bool is_empty() const noexcept { return module_ == nullptr; }
  const std::type_info& type_info() const { return type_ ? *type_ : typeid(void); }
  // A deep copy of the module (Module::clone), behind a new AnyModule.
  AnyModule clone(const std::optional<Device>& device = std::nullopt) const {
    LOOM_CHECK(module_, "AnyModule: clone() of an empty AnyModule");
    AnyModule copy;
    copy.rebind_ = rebind_;
    rebind_(copy, module_->clone(device));
    return copy;
  }
  // The same type over another module (a clone): for containers.
  AnyModule with_module(std::shared_ptr<Module> module) const {
    AnyModule copy;
    copy.rebind_ = rebind_;
    rebind_(copy, std::move(module));
    return copy;
  }

 private:
  using Call = std::function<std::any(Module&, std::vector<std::any>&)>;

  template <class Impl>
  void set(std::shared_ptr<Impl> module) {
    static_assert(requires { &Impl::forward; },
                  "AnyModule: the module needs exactly one forward (an overloaded forward cannot be stored)");
    module_ = std::move(module);
    type_ = &typeid(Impl);
    call_ = make_call<Impl>(&Impl::forward);
    rebind_ = [](AnyModule& any, std::shared_ptr<Module> m) { any.set<Impl>(std::static_pointer_cast<Impl>(m)); };
  }

  template <class Impl, class R, class... P>
  static Call make_call(R (Impl::*fn)(P...)) {
    return make_call_impl<Impl, R, P...>([fn](Impl& m, auto&&... a) -> R { return (m.*fn)(a...); });
  }
  template <class Impl, class R, class... P>
  static Call make_call(R (Impl::*fn)(P...) const) {
    return make_call_impl<Impl, R, P...>([fn](Impl& m, auto&&... a) -> R { return (m.*fn)(a...); });
  }
  template <class Impl, class R, class... P, class Invoke>
  static Call make_call_impl(Invoke invoke) {
    return [invoke](Module& module, std::vector<std::any>& args) -> std::any {
      constexpr size_t total = sizeof...(P);
      std::vector<std::any> defaults;
      if constexpr (requires { Impl::forward_default_args(); }) defaults = Impl::forward_default_args();
      LOOM_CHECK(args.size() <= total && args.size() + defaults.size() >= total, "AnyModule: ", module.name(),
                 "'s forward takes ", total - std::min(defaults.size(), total), defaults.empty() ? "" : " to ",
                 defaults.empty() ? std::string() : std::to_string(total), " arguments, got ", args.size());
      for (size_t i = args.size(); i < total; ++i) args.push_back(defaults[defaults.size() - (total - i)]);
      return call_with<Impl, R, P...>(invoke, static_cast<Impl&>(module), args, std::index_sequence_for<P...>{});
    };
  }
  template <class Impl, class R, class... P, class Invoke, size_t... I>
  static std::any call_with(const Invoke& invoke, Impl& module, std::vector<std::any>& args,
                            std::index_sequence<I...>) {
    (check_arg<std::decay_t<P>>(module, args[I], I), ...);
    if constexpr (std::is_void_v<R>) {
      invoke(module, *std::any_cast<std::decay_t<P>>(&args[I])...);
      return {};
    } else {
      return std::any(invoke(module, *std::any_cast<std::decay_t<P>>(&args[I])...));
    }
  }
  template <class T>
  static void check_arg(const Module& module, const std::any& arg, size_t i) {
    LOOM_CHECK(arg.type() == typeid(T), "AnyModule: argument ", i + 1, " of ", module.name(), "'s forward is a ",
               detail::demangled(typeid(T)), ", got a ", detail::demangled(arg.type()));
  }

  std::shared_ptr<Module> module_;
  const std::type_info* type_ = nullptr;
  Call call_;
  void (*rebind_)(AnyModule&, std::shared_ptr<Module>) = nullptr;
};

}  // namespace loom::nn
