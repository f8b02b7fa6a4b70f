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

#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::ew {
namespace {

// `SameDtypeOut`: the output may also have the inputs' dtype (the in-place
// logical ops); otherwise it must be bool.
template <class P, bool SameDtypeOut>
void predicate_op(const LoomKernelCall& c, const char* name) {
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
void bitwise_op(const LoomKernelCall& c, const char* name) {
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

void eq(const LoomKernelCall& c) { predicate_op<Eq, false>(c, "eq"); }
void ne(const LoomKernelCall& c) { predicate_op<Ne, false>(c, "ne"); }
void lt(const LoomKernelCall& c) { predicate_op<Lt, false>(c, "lt"); }
void le(const LoomKernelCall& c) { predicate_op<Le, false>(c, "le"); }
void gt(const LoomKernelCall& c) { predicate_op<Gt, false>(c, "gt"); }
void ge(const LoomKernelCall& c) { predicate_op<Ge, false>(c, "ge"); }
void logical_and(const LoomKernelCall& c) { predicate_op<LogicalAnd, true>(c, "logical_and"); }
void logical_or(const LoomKernelCall& c) { predicate_op<LogicalOr, true>(c, "logical_or"); }
void logical_xor(const LoomKernelCall& c) { predicate_op<LogicalXor, true>(c, "logical_xor"); }
void bitwise_and(const LoomKernelCall& c) { bitwise_op<BitAnd>(c, "bitwise_and"); }
void bitwise_or(const LoomKernelCall& c) { bitwise_op<BitOr>(c, "bitwise_or"); }
void bitwise_xor(const LoomKernelCall& c) { bitwise_op<BitXor>(c, "bitwise_xor"); }

}  // namespace

// Masks are of the compute dtype (the inputs' dtype; where: self's and
// other's), not of the bool result.
void register_compare_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  constexpr uint64_t kIntegralOrBoolMask = kIntegralMask | dtype_bit(LOOM_DTYPE_BOOL);
  r.kernel("eq", LOOM_GPU_NAME, kernel<eq>, kAllMask);
  r.kernel("ne", LOOM_GPU_NAME, kernel<ne>, kAllMask);
  r.kernel("lt", LOOM_GPU_NAME, kernel<lt>, kAllMask);
  r.kernel("le", LOOM_GPU_NAME, kernel<le>, kAllMask);
  r.kernel("gt", LOOM_GPU_NAME, kernel<gt>, kAllMask);
  r.kernel("ge", LOOM_GPU_NAME, kernel<ge>, kAllMask);
  for (const char* op : {"logical_and", "logical_and_"}) r.kernel(op, LOOM_GPU_NAME, kernel<logical_and>, kAllMask);
  for (const char* op : {"logical_or", "logical_or_"}) r.kernel(op, LOOM_GPU_NAME, kernel<logical_or>, kAllMask);
  for (const char* op : {"logical_xor", "logical_xor_"}) r.kernel(op, LOOM_GPU_NAME, kernel<logical_xor>, kAllMask);
  for (const char* op : {"bitwise_and", "bitwise_and_"}) r.kernel(op, LOOM_GPU_NAME, kernel<bitwise_and>, kIntegralOrBoolMask);
  for (const char* op : {"bitwise_or", "bitwise_or_"}) r.kernel(op, LOOM_GPU_NAME, kernel<bitwise_or>, kIntegralOrBoolMask);
  for (const char* op : {"bitwise_xor", "bitwise_xor_"}) r.kernel(op, LOOM_GPU_NAME, kernel<bitwise_xor>, kIntegralOrBoolMask);
  r.kernel("where", LOOM_GPU_NAME, kernel<where>, kAllMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::ew
