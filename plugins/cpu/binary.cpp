// Arithmetic binary and ternary ops: remainder, pow, maximum, minimum,
// atan2, lerp and div's trunc/floor modes, plus the registration of every
// binary op (comparisons, logical, bitwise and where are in
// binary_compare.cpp). Definitions: docs/kernel_conventions.md, "Elementwise
// binary and ternary ops"; the loops: binary_loops.hpp.
//
// Each op is a functor on storage values from loom/plugin/scalar_ops.hpp,
// the semantics every device shares. Integer division by zero and negative
// integer powers are rejected by a scan (Op::Invalid) before the loop writes
// anything.
#include "binary_kernels.hpp"
#include "binary_loops.hpp"
#include "common.hpp"
#include "kernels.hpp"

#include <loom/plugin/op_rules.hpp>
#include <loom/plugin/scalar_ops.hpp>

#include <cstring>

namespace loom::cpu {
namespace {

// The functors are loom's shared reference semantics
// (loom/plugin/scalar_ops.hpp).
using plugin::ops::DivFloor;
using plugin::ops::DivTrunc;
using plugin::ops::Lerp;

// The same-dtype kernel family: the rows of loom/plugin/op_tables.h with
// rules Arith, Extremum and FloatBin (plugin::register_binary_rows
// instantiates it per row) and div's rounding modes.
struct ArithFamily {
  static constexpr bool serves(plugin::BinaryRule r) { return plugin::is_arithmetic(r); }

  template <template <class> class Op, DTypes Set>
  static void arithmetic(const LoomKernelCall& c, const char* name) {
    const auto [out, a, b] = binary_args(c, name);
    dispatch<Set>(out.dtype, name, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!plugin::is_floating_v<T> && requires { typename Op<T>::Invalid; }) {
        using Invalid = typename Op<T>::Invalid;
        const auto invalid = [](T x, T y) { return Invalid{}(x, y); };
        if (any_element(invalid, In<T>{a}, In<T>{b})) [[unlikely]]
          fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: %s", name, Invalid::message);
      }
      if constexpr (plugin::is_floating_v<T> && std::is_same_v<Op<T>, plugin::ops::Pow<T>>)
        if (small_power<T>(out, a, b)) return;
      apply_elementwise<T>(out, Op<T>{}, In<T>{a}, In<T>{b});
    });
  }

  // pow(x, 2) and pow(x, 3) with one exponent for all (x ** 3 in Python,
  // nanoGPT's GELU) as products, as PyTorch does: pow's libm call per
  // element does not vectorise and costs several times more.
  template <class T>
  static bool small_power(const LoomTensorDesc& out, const LoomTensorDesc& a, const LoomTensorDesc& b) {
    for (int32_t d = 0; d < b.ndim; ++d)
      if (b.shape[d] != 1 && b.strides[d] != 0) return false;
    using V = plugin::opmath_t<T>;
    const V e = plugin::widen(*plugin::data_ptr<T>(b));
    if (e == V(2)) {
      apply_elementwise<T>(out, [](T x) { const V v = plugin::widen(x); return plugin::narrow<T>(v * v); }, In<T>{a});
      return true;
    }
    if (e == V(3)) {
      apply_elementwise<T>(out, [](T x) { const V v = plugin::widen(x); return plugin::narrow<T>(v * v * v); },
                           In<T>{a});
      return true;
    }
    return false;
  }
};

void lerp(const LoomKernelCall& c) {
  expect_arity(c, "lerp", 3, 1);
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 3; ++i) expect_like(c.inputs[i], out, "lerp");
  dispatch<plugin::op_class("lerp")>(out.dtype, "lerp", [&](auto tag) {
    using T = decltype(tag);
    apply_elementwise<T>(out, Lerp<T>{}, In<T>{c.inputs[0]}, In<T>{c.inputs[1]},
                         In<T>{c.inputs[2]});
  });
}

bool str_is(const LoomValue& v, const char* s) {
  const size_t n = std::strlen(s);
  return v.u.str.size == static_cast<int64_t>(n) && std::memcmp(v.u.str.data, s, n) == 0;
}

}  // namespace

DivMode div_mode(const LoomKernelCall& c) {
  // The existing callers of div (and the core before rounding_mode existed)
  // pass no value at all: that is true division too.
  if (c.num_values < 1 || c.values[0].kind == LOOM_VALUE_NONE) return DivMode::True;
  const LoomValue& v = c.values[0];
  if (v.kind == LOOM_VALUE_STRING) {
    if (str_is(v, "trunc")) return DivMode::Trunc;
    if (str_is(v, "floor")) return DivMode::Floor;
    fail(LOOM_STATUS_INVALID_ARGUMENT,
         "cpu div: rounding_mode must be None, 'trunc' or 'floor', got '%.*s'",
         static_cast<int>(v.u.str.size < 64 ? v.u.str.size : 64), v.u.str.data);
  }
  fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu div: rounding_mode must be a string or None, got kind %d",
       v.kind);
}

void div_rounded(const LoomKernelCall& c, DivMode mode) {
  if (mode == DivMode::Floor) ArithFamily::arithmetic<DivFloor, DTypes::NoBool>(c, "div");
  else ArithFamily::arithmetic<DivTrunc, DTypes::NoBool>(c, "div");
}

// In-place forms are the same kernels: outputs[0] aliases inputs[0] and the
// core has cast the other operands to self's dtype. Masks come from the
// catalog's rules (loom/plugin/op_rules.hpp).
void register_binary_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  plugin::register_binary_rows<ArithFamily>(r, "cpu");
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "lerp", "cpu", kernel<lerp>);
  // div_ takes integers for its trunc/floor modes; true division of an
  // integer self is rejected by the core (and by the kernel: UNSUPPORTED).
  r.kernel("div_", "cpu", kernel<div>, kNoBoolMask);
}

}  // namespace loom::cpu
