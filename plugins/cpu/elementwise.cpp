// Elementwise arithmetic: add, sub, mul, div, neg, relu, exp.
//
// Each op is a small functor on storage values that computes in
// compute_t<T> (float for 16-bit floats, wrapping unsigned for integers, so
// integer overflow wraps like PyTorch instead of being undefined). The loops
// and their fast paths are in loops.hpp.
#include "binary_kernels.hpp"
#include "common.hpp"
#include "kernels.hpp"
#include "loops.hpp"

#include <cmath>
#include <type_traits>

namespace loom::cpu {
namespace {

// alpha of add/sub in the compute type. Integers go through int64 so a
// negative alpha wraps correctly into the unsigned compute type.
template <class T>
compute_t<T> alpha_as(const LoomValue& v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<compute_t<T>>(scalar_as<int64_t>(v));
  else
    return scalar_as<compute_t<T>>(v);
}

// bool: logical or (alpha false adds nothing).
template <class T>
struct Add {
  compute_t<T> alpha;
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || (alpha && b);
    else return narrow<T>(widen(a) + alpha * widen(b));
  }
};

template <class T>
struct Sub {
  compute_t<T> alpha;
  T operator()(T a, T b) const { return narrow<T>(widen(a) - alpha * widen(b)); }
};

// bool: logical and.
template <class T>
struct Mul {
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return narrow<T>(widen(a) * widen(b));
  }
};

template <class T>
struct Div {
  T operator()(T a, T b) const { return narrow<T>(widen(a) / widen(b)); }
};

// Unsigned negation wraps, which is exactly two's complement negation.
template <class T>
struct Neg {
  T operator()(T a) const { return narrow<T>(-widen(a)); }
};

// NaN fails `< 0` and passes through, as in PyTorch.
template <class T>
struct Relu {
  T operator()(T a) const {
    if constexpr (std::is_unsigned_v<T>) {
      return a;
    } else if constexpr (std::is_integral_v<T>) {
      return a < 0 ? T(0) : a;
    } else {
      const compute_t<T> x = widen(a);
      return narrow<T>(x < 0 ? compute_t<T>(0) : x);
    }
  }
};

template <class T>
struct Exp {
  T operator()(T a) const { return narrow<T>(std::exp(widen(a))); }
};

template <template <class> class Op, DTypes Set, bool HasAlpha>
void binary_kernel(const LoomKernelCall& c, const char* name) {
  const auto [out, a, b] = binary_args(c, name);
  if constexpr (HasAlpha) expect_values(c, name, 1);
  dispatch<Set>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    Op<T> op{};
    if constexpr (HasAlpha) op.alpha = alpha_as<T>(c.values[0]);
    apply_binary<T>(out, a, b, op);
  });
}

template <template <class> class Op, DTypes Set>
void unary_kernel(const LoomKernelCall& c, const char* name) {
  expect_arity(c, name, 1, 1);
  const LoomTensorDesc& out = c.outputs[0];
  const LoomTensorDesc& a = c.inputs[0];
  expect_like(a, out, name);
  dispatch<Set>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    apply_unary<T, T>(out, a, Op<T>{});
  });
}

}  // namespace

void add(const LoomKernelCall& c) { binary_kernel<Add, DTypes::All, true>(c, "add"); }
void sub(const LoomKernelCall& c) { binary_kernel<Sub, DTypes::NoBool, true>(c, "sub"); }
void mul(const LoomKernelCall& c) { binary_kernel<Mul, DTypes::All, false>(c, "mul"); }
// values[0] is rounding_mode: trunc/floor also take integers and are in
// binary.cpp with the other rounding ops; None is true division.
void div(const LoomKernelCall& c) {
  if (const DivMode mode = div_mode(c); mode != DivMode::True) return div_rounded(c, mode);
  binary_kernel<Div, DTypes::Floating, false>(c, "div");
}
void neg(const LoomKernelCall& c) { unary_kernel<Neg, DTypes::NoBool>(c, "neg"); }
void relu(const LoomKernelCall& c) { unary_kernel<Relu, DTypes::NoBool>(c, "relu"); }
void exp(const LoomKernelCall& c) { unary_kernel<Exp, DTypes::Floating>(c, "exp"); }

}  // namespace loom::cpu
