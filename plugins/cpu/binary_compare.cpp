// Comparisons (eq ne lt le gt ge), logical_and/or/xor, bitwise_and/or/xor
// and where, with the in-place logical and bitwise forms. Definitions:
// docs/kernel_conventions.md, "Elementwise binary and ternary ops"; the
// loops: binary_loops.hpp.
//
// Comparisons and logical ops read both inputs in the compute dtype and
// write bool. The in-place logical ops (logical_and_ ...) write self's own
// dtype instead, so the same kernels also take an output of the inputs'
// dtype and store 0 or 1 in it.
#include "binary_kernels.hpp"
#include "binary_loops.hpp"
#include "common.hpp"
#include "kernels.hpp"

#include <loom/plugin/op_rules.hpp>
#include <loom/plugin/scalar_ops.hpp>

#include <cstdint>
#include <type_traits>

namespace loom::cpu {
namespace {

// The predicates and bitwise functors are loom's shared reference semantics
// (loom/plugin/scalar_ops.hpp): NaN compares unequal to everything, signed
// integers compare as signed.
using plugin::ops::Predicate;
using plugin::ops::Select;

// The comparison, logical and bitwise rows of loom/plugin/op_tables.h, as
// kernel families plugin::register_binary_rows instantiates per row.
struct CompareFamilies {
  static constexpr bool serves(plugin::BinaryRule r) { return !plugin::is_arithmetic(r); }

  // `SameDtypeOut`: the output may also have the inputs' dtype (the in-place
  // logical ops); otherwise it must be bool.
  template <class P, bool SameDtypeOut>
  static void predicate(const LoomKernelCall& c, const char* name) {
    const auto [out, a, b] = binary_args(c, name, /*same_dtype=*/false);
    const bool bool_out = out.dtype == LOOM_DTYPE_BOOL;
    if (!bool_out && !(SameDtypeOut && out.dtype == a.dtype)) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: the output must be bool%s, got %s", name,
           SameDtypeOut ? " or the inputs' dtype" : "", plugin::dtype_name(out.dtype));
    dispatch<DTypes::All>(a.dtype, name, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (SameDtypeOut && !std::is_same_v<T, bool>) {
        if (!bool_out) return apply_elementwise<T>(out, Predicate<T, T, P>{}, In<T>{a}, In<T>{b});
      }
      apply_elementwise<bool>(out, Predicate<bool, T, P>{}, In<T>{a}, In<T>{b});
    });
  }

  template <template <class> class F>
  static void bitwise(const LoomKernelCall& c, const char* name) {
    const auto [out, a, b] = binary_args(c, name);
    dispatch<DTypes::All>(out.dtype, name, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (plugin::is_floating_v<T>) fail_dtype(name, out.dtype);
      else apply_elementwise<T>(out, F<T>{}, In<T>{a}, In<T>{b});
    });
  }
};

// where moves bit patterns, so it dispatches on the element size alone.
void where(const LoomKernelCall& c) {
  expect_arity(c, "where", 3, 1);
  const LoomTensorDesc& out = c.outputs[0];
  const LoomTensorDesc& cond = c.inputs[0];
  expect_like(cond, out, "where", /*same_dtype=*/false);
  if (cond.dtype != LOOM_DTYPE_BOOL) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu where: the condition must be bool, got %s",
         plugin::dtype_name(cond.dtype));
  const LoomTensorDesc& x = c.inputs[1];
  const LoomTensorDesc& y = c.inputs[2];
  expect_like(x, out, "where");
  expect_like(y, out, "where");
  const auto run = [&](auto tag) {
    using U = decltype(tag);
    apply_elementwise<U>(out, Select<U>{}, In<uint8_t>{cond}, In<U>{x}, In<U>{y});
  };
  switch (plugin::dtype_itemsize(out.dtype)) {
    case 1: return run(uint8_t{});
    case 2: return run(uint16_t{});
    case 4: return run(uint32_t{});
    case 8: return run(uint64_t{});
    default: fail_dtype("where", out.dtype);
  }
}


}  // namespace

// Masks are the catalog's (loom/plugin/op_rules.hpp): of the compute dtype
// (the inputs' dtype; where: self's and other's), not of the bool result.
void register_compare_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  plugin::register_binary_rows<CompareFamilies>(r, "cpu");
  r.kernel("where", "cpu", kernel<where>, kAllMask);
}

}  // namespace loom::cpu
