// Comparisons (eq ne lt le gt ge), logical_and/or/xor, bitwise_and/or/xor
// and where on CUDA, with the in-place logical and bitwise forms and the
// CPU plugin's dtype masks (docs/kernel_conventions.md, "Elementwise binary
// and ternary ops"). Functors: binary_ops.cuh.
//
// Comparisons and logical ops read both inputs in their (compute) dtype and
// write bool; the in-place logical ops (logical_and_ ...) write self's own
// dtype instead, so the logical kernels also take an output of the inputs'
// dtype and store 0 or 1 in it. where moves bit patterns and is
// instantiated once per element size, not per dtype.
#include "binary_ops.cuh"
#include "elementwise_args.hpp"
#include "loops.cuh"
#include "vendor/gpu_target.hpp"

#include <loom/plugin/op_rules.hpp>

#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::ew {
namespace {

// The comparison, logical and bitwise rows of loom/plugin/op_tables.h, as
// kernel families plugin::register_binary_rows instantiates per row.
struct CompareFamilies {
  static constexpr bool serves(plugin::BinaryRule r) { return !plugin::is_arithmetic(r); }

  // `SameDtypeOut`: the output may also have the inputs' dtype (the in-place
  // logical ops); otherwise it must be bool.
  template <class P, bool SameDtypeOut>
  static void predicate(const LoomKernelCall& c, const char* name) {
    expect_arity(c, name, 2, 1);
    const LoomTensorDesc& out = c.outputs[0];
    const LoomTensorDesc& a = c.inputs[0];
    const LoomTensorDesc& b = c.inputs[1];
    expect_like(a, out, name, /*same_dtype=*/false);
    expect_like(b, a, name);
    const bool bool_out = out.dtype == LOOM_DTYPE_BOOL;
    if (!bool_out && !(SameDtypeOut && out.dtype == a.dtype)) [[unlikely]]
      fail_args(name, std::string("the output must be bool") + (SameDtypeOut ? " or the inputs' dtype" : "") +
                          ", got " + plugin::dtype_name(out.dtype));
    visit<DTypes::All>(a.dtype, name, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (SameDtypeOut && !std::is_same_v<T, bool>) {
        if (!bool_out) return elementwise<T, T, T>(out, {&a, &b}, Predicate<T, T, P>{}, enter(c), name);
      }
      elementwise<bool, T, T>(out, {&a, &b}, Predicate<bool, T, P>{}, enter(c), name);
    });
  }

  // Integers and bool; a floating dtype is UNSUPPORTED (the core rejects it).
  template <template <class> class Op>
  static void bitwise(const LoomKernelCall& c, const char* name) {
    expect_arity(c, name, 2, 1);
    const LoomTensorDesc& out = c.outputs[0];
    expect_like(c.inputs[0], out, name);
    expect_like(c.inputs[1], out, name);
    visit<DTypes::All>(out.dtype, name, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_floating_v<T>)
        throw plugin::Failure(LOOM_STATUS_UNSUPPORTED,
                              std::string(LOOM_GPU_NAME " ") + name + ": dtype " + plugin::dtype_name(out.dtype) + " is not supported");
      else elementwise<T, T, T>(out, {&c.inputs[0], &c.inputs[1]}, Op<T>{}, enter(c), name);
    });
  }
};

void where(const LoomKernelCall& c) {
  constexpr const char* name = "where";
  expect_arity(c, name, 3, 1);
  const LoomTensorDesc& out = c.outputs[0];
  const LoomTensorDesc& cond = c.inputs[0];
  const LoomTensorDesc& x = c.inputs[1];
  const LoomTensorDesc& y = c.inputs[2];
  expect_like(cond, out, name, /*same_dtype=*/false);
  if (cond.dtype != LOOM_DTYPE_BOOL) [[unlikely]]
    fail_args(name, std::string("the condition must be bool, got ") + plugin::dtype_name(cond.dtype));
  expect_like(x, out, name);
  expect_like(y, out, name);
  const auto run = [&](auto tag) {
    using U = decltype(tag);
    elementwise<U, uint8_t, U, U>(out, {&cond, &x, &y}, Select<U>{}, enter(c), name);
  };
  switch (plugin::dtype_itemsize(out.dtype)) {
    case 1: return run(uint8_t{});
    case 2: return run(uint16_t{});
    case 4: return run(uint32_t{});
    case 8: return run(uint64_t{});
    default: break;
  }
  throw plugin::Failure(LOOM_STATUS_UNSUPPORTED,
                        std::string(LOOM_GPU_NAME " where: dtype ") + plugin::dtype_name(out.dtype) + " is not supported");
}


}  // namespace

// Masks are the catalog's (loom/plugin/op_rules.hpp): of the compute dtype
// (the inputs' dtype; where: self's and other's), not of the bool result.
void register_compare_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  plugin::register_binary_rows<CompareFamilies>(r, LOOM_GPU_NAME);
  r.kernel("where", LOOM_GPU_NAME, kernel<where>, kAllMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::ew
