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

#include <loom/plugin/scalar_ops.hpp>

#include <cstring>

namespace loom::cpu {
namespace {

// The functors are loom's shared reference semantics
// (loom/plugin/scalar_ops.hpp).
using plugin::ops::Atan2;
using plugin::ops::DivFloor;
using plugin::ops::DivTrunc;
using plugin::ops::Lerp;
using plugin::ops::Maximum;
using plugin::ops::Minimum;
using plugin::ops::Pow;
using plugin::ops::Remainder;

template <template <class> class Op, DTypes Set>
void binary_op(const LoomKernelCall& c, const char* name) {
  const auto [out, a, b] = binary_args(c, name);
  dispatch<Set>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!plugin::is_floating_v<T> && requires { typename Op<T>::Invalid; }) {
      using Invalid = typename Op<T>::Invalid;
      const auto invalid = [](T x, T y) { return Invalid{}(x, y); };
      if (any_element(invalid, In<T>{a}, In<T>{b})) [[unlikely]]
        fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: %s", name, Invalid::message);
    }
    apply_elementwise<T>(out, Op<T>{}, In<T>{a}, In<T>{b});
  });
}

void remainder(const LoomKernelCall& c) { binary_op<Remainder, DTypes::NoBool>(c, "remainder"); }
void pow(const LoomKernelCall& c) { binary_op<Pow, DTypes::NoBool>(c, "pow"); }
void maximum(const LoomKernelCall& c) { binary_op<Maximum, DTypes::All>(c, "maximum"); }
void minimum(const LoomKernelCall& c) { binary_op<Minimum, DTypes::All>(c, "minimum"); }
void atan2(const LoomKernelCall& c) { binary_op<Atan2, DTypes::Floating>(c, "atan2"); }

void lerp(const LoomKernelCall& c) {
  expect_arity(c, "lerp", 3, 1);
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 3; ++i) expect_like(c.inputs[i], out, "lerp");
  dispatch<DTypes::Floating>(out.dtype, "lerp", [&](auto tag) {
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
  if (mode == DivMode::Floor) binary_op<DivFloor, DTypes::NoBool>(c, "div");
  else binary_op<DivTrunc, DTypes::NoBool>(c, "div");
}

// In-place forms are the same kernels: outputs[0] aliases inputs[0] and the
// core has cast the other operands to self's dtype.
void register_binary_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("remainder", "cpu", kernel<remainder>, kNoBoolMask);
  r.kernel("remainder_", "cpu", kernel<remainder>, kNoBoolMask);
  r.kernel("pow", "cpu", kernel<pow>, kNoBoolMask);
  r.kernel("pow_", "cpu", kernel<pow>, kNoBoolMask);
  r.kernel("maximum", "cpu", kernel<maximum>, kAllMask);
  r.kernel("minimum", "cpu", kernel<minimum>, kAllMask);
  r.kernel("atan2", "cpu", kernel<atan2>, kFloatingMask);
  r.kernel("atan2_", "cpu", kernel<atan2>, kFloatingMask);
  r.kernel("lerp", "cpu", kernel<lerp>, kFloatingMask);
  r.kernel("lerp_", "cpu", kernel<lerp>, kFloatingMask);
  r.kernel("sub_", "cpu", kernel<sub>, kNoBoolMask);
  // div_ takes integers for its trunc/floor modes; true division of an
  // integer self is rejected by the core (and by the kernel: UNSUPPORTED).
  r.kernel("div_", "cpu", kernel<div>, kNoBoolMask);
  register_compare_kernels(r);
}

}  // namespace loom::cpu
