// Elementwise arithmetic: add, sub, mul, div, neg, relu, exp.
//
// Each op is a functor on storage values from loom/plugin/scalar_ops.hpp
// (computing in arith_t<T>: float for 16-bit floats, wrapping unsigned for
// integers, so integer overflow wraps like PyTorch instead of being
// undefined). The loops and their fast paths are in loops.hpp.
#include "binary_kernels.hpp"
#include "common.hpp"
#include "float_fns.hpp"
#include "kernels.hpp"
#include "loops.hpp"

#include <loom/plugin/op_rules.hpp>
#include <loom/plugin/scalar_ops.hpp>

#include <cmath>
#include <type_traits>

namespace loom::cpu {
namespace {

// alpha of add/sub in the compute type. Integers go through int64 so a
// negative alpha wraps correctly into the unsigned compute type.
template <class T>
arith_t<T> alpha_as(const LoomValue& v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<arith_t<T>>(scalar_as<int64_t>(v));
  else
    return scalar_as<arith_t<T>>(v);
}

// The functors are loom's shared reference semantics
// (loom/plugin/scalar_ops.hpp); exp is the one float-rule op here.
using plugin::ops::Add;
using plugin::ops::Div;
using plugin::ops::Mul;
using plugin::ops::Neg;
using plugin::ops::Relu;
using plugin::ops::Sub;

template <class T>
using Exp = fns::Exp<T>;  // float_fns.hpp: compiled fused regions call it too

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

void add(const LoomKernelCall& c) { binary_kernel<Add, plugin::op_class("add"), true>(c, "add"); }
void sub(const LoomKernelCall& c) { binary_kernel<Sub, plugin::op_class("sub"), true>(c, "sub"); }
void mul(const LoomKernelCall& c) { binary_kernel<Mul, plugin::op_class("mul"), false>(c, "mul"); }
// values[0] is rounding_mode: trunc/floor also take integers and are in
// binary.cpp with the other rounding ops; None is true division.
void div(const LoomKernelCall& c) {
  if (const DivMode mode = div_mode(c); mode != DivMode::True) return div_rounded(c, mode);
  binary_kernel<Div, DTypes::Floating, false>(c, "div");
}
void neg(const LoomKernelCall& c) { unary_kernel<Neg, plugin::op_class("neg")>(c, "neg"); }
void relu(const LoomKernelCall& c) { unary_kernel<Relu, plugin::op_class("relu")>(c, "relu"); }
void exp(const LoomKernelCall& c) { unary_kernel<Exp, plugin::op_class("exp")>(c, "exp"); }

// The elementwise family, as the CUDA plugin groups it: the ops above, the
// unary ones (unary.cpp, unary_float.cpp), the binary and ternary ones
// (binary.cpp) and the comparisons (binary_compare.cpp). Masks come from
// the catalog's rules (loom/plugin/op_rules.hpp); in-place forms are the
// same kernels, with outputs[0] aliasing inputs[0].
void register_elementwise_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "add", "cpu", kernel<add>);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "mul", "cpu", kernel<mul>);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "sub", "cpu", kernel<sub>);
  // Integers too: div with rounding_mode "trunc"/"floor" stays integral.
  r.kernel("div", "cpu", kernel<div>, kNoBoolMask);
  // The core plans outer as a broadcast multiply.
  r.kernel("outer", "cpu", kernel<mul>, kAllMask);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "neg", "cpu", kernel<neg>);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "relu", "cpu", kernel<relu>);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "exp", "cpu", kernel<exp>);
  register_unary_kernels(r);
  register_unary_float_kernels(r);
  register_activation_backward_kernels(r);
  register_binary_kernels(r);
  register_compare_kernels(r);
}

}  // namespace loom::cpu
