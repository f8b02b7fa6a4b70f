// Arithmetic binary and ternary CUDA kernels: add, sub, mul (and outer,
// planned by the core as a broadcast multiply), div with its rounding
// modes, remainder, pow, maximum, minimum, atan2, lerp, with the in-place
// forms and dtype masks the CPU plugin registers (docs/kernel_conventions.md,
// "Elementwise binary and ternary ops"). Functors: binary_ops.cuh.
//
// Integer division by zero and negative integer powers are errors
// (INVALID_ARGUMENT), as on the CPU: a scan kernel raises a flag that the
// host reads back before the op runs, so a failing call writes nothing and
// an in-place self stays as it was. That read synchronises the stream, once
// per integer div/remainder/pow call; float calls never scan.
#include "../cuda_error.hpp"
#include "binary_ops.cuh"
#include "device_blocks.hpp"
#include "elementwise_args.hpp"
#include "loops.cuh"
#include "vendor/gpu_target.hpp"

#include <loom/plugin/op_rules.hpp>

namespace loom::LOOM_GPU_NAMESPACE::ew {
namespace {

// ---------------------------------------------------- invalid inputs ---

template <class Invalid, class T>
__global__ void any_invalid_kernel(Geometry<2> g, const T* a, const T* b, unsigned* flag) {
  const bool dense = g.dense();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[2] = {i, i};
    if (!dense) g.offsets(i, off);
    if (Invalid{}(a[off[0]], b[off[1]])) atomicExch(flag, 1u);
  }
}

// Throws INVALID_ARGUMENT "cuda <op>: <Invalid::message>" when Invalid holds
// for some element pair of a and b (both broadcast to out's shape).
template <class Invalid, class T>
void reject_invalid(const LoomTensorDesc& out, const LoomTensorDesc& a, const LoomTensorDesc& b, cudaStream_t s,
                    const char* op) {
  const int64_t* strides[2] = {a.strides, b.strides};
  Geometry<2> g;
  if (!make_geometry<2>(out.ndim, out.shape, strides, g))
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": more than 12 non-mergeable dims");
  if (g.numel == 0) return;
  const int index = out.device.index;
  Blocks blocks(index, s);
  auto* f = static_cast<unsigned*>(blocks.get(sizeof(unsigned)));
  check(cudaMemsetAsync(f, 0, sizeof(unsigned), s), index, "cudaMemsetAsync (invalid-input flag)");
  any_invalid_kernel<Invalid><<<grid_for(g.numel), kBlock, 0, s>>>(g, plugin::data_ptr<const T>(a),
                                                                   plugin::data_ptr<const T>(b), f);
  check(cudaGetLastError(), index, "invalid-input scan launch");
  unsigned hit = 0;
  check(cudaMemcpyAsync(&hit, f, sizeof hit, cudaMemcpyDeviceToHost, s), index, "cudaMemcpyAsync (invalid-input flag)");
  check(cudaStreamSynchronize(s), index, "cudaStreamSynchronize (invalid-input flag)");
  if (hit) throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": " + Invalid::message);
}

// ------------------------------------------------------------ kernels ---

struct BinaryArgs {
  const LoomTensorDesc& out;
  const LoomTensorDesc& a;
  const LoomTensorDesc& b;
};
BinaryArgs binary_args(const LoomKernelCall& c, const char* op) {
  expect_arity(c, op, 2, 1);
  expect_like(c.inputs[0], c.outputs[0], op);
  expect_like(c.inputs[1], c.outputs[0], op);
  return {c.outputs[0], c.inputs[0], c.inputs[1]};
}

// The same-dtype kernel family: the rows of loom/plugin/op_tables.h with
// rules Arith, Extremum and FloatBin (plugin::register_binary_rows
// instantiates it per row), mul, and div's rounding modes.
struct ArithFamily {
  static constexpr bool serves(plugin::BinaryRule r) { return plugin::is_arithmetic(r); }

  // out = Op<T>(a, b) for the dtypes of Set; integer ops with an Invalid rule
  // scan first.
  template <template <class> class Op, DTypes Set>
  static void arithmetic(const LoomKernelCall& c, const char* name) {
    // Named references, not a structured binding: clang 15 (hipcc) cannot
    // capture bindings in a lambda.
    const BinaryArgs args = binary_args(c, name);
    const LoomTensorDesc &out = args.out, &a = args.a, &b = args.b;
    visit<Set>(out.dtype, name, [&](auto tag) {
      using T = decltype(tag);
      const cudaStream_t s = enter(c);
      if constexpr (!is_floating_v<T> && requires { typename Op<T>::Invalid; })
        reject_invalid<typename Op<T>::Invalid, T>(out, a, b, s, name);
      elementwise<T, T, T>(out, {&a, &b}, Op<T>{}, s, name);
    });
  }
};

// alpha of add/sub in T's arithmetic type. Integers go through int64 so a
// negative alpha wraps into the unsigned type; a float alpha saturates.
template <class T>
arith_t<T> alpha_as(const LoomKernelCall& c, const char* op) {
  if constexpr (is_integer_v<T>) return static_cast<arith_t<T>>(scalar_arg<int64_t>(c, op, 0));
  else return scalar_arg<arith_t<T>>(c, op, 0);
}

template <template <class> class Op, DTypes Set>
void alpha_op(const LoomKernelCall& c, const char* name) {
  const BinaryArgs args = binary_args(c, name);
  const LoomTensorDesc &out = args.out, &a = args.a, &b = args.b;
  visit<Set>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    const Op<T> op{alpha_as<T>(c, name)};
    elementwise<T, T, T>(out, {&a, &b}, op, enter(c), name);
  });
}

void add(const LoomKernelCall& c) { alpha_op<Add, plugin::op_class("add")>(c, "add"); }
void sub(const LoomKernelCall& c) { alpha_op<Sub, plugin::op_class("sub")>(c, "sub"); }
void mul(const LoomKernelCall& c) { ArithFamily::arithmetic<Mul, plugin::op_class("mul")>(c, "mul"); }


// values[0] is rounding_mode: NONE (or no value: older callers) is true
// division, floating only (an integer dtype is UNSUPPORTED, as on the CPU);
// 'trunc' and 'floor' take integers too.
void div(const LoomKernelCall& c) {
  if (c.num_values < 1 || c.values[0].kind == LOOM_VALUE_NONE) return ArithFamily::arithmetic<Div, DTypes::Floating>(c, "div");
  const LoomValue& v = c.values[0];
  if (string_is(v, "trunc")) return ArithFamily::arithmetic<DivTrunc, DTypes::NoBool>(c, "div");
  if (string_is(v, "floor")) return ArithFamily::arithmetic<DivFloor, DTypes::NoBool>(c, "div");
  fail_args("div", "rounding_mode must be None, 'trunc' or 'floor', got " + string_of(v));
}

void lerp(const LoomKernelCall& c) {
  constexpr const char* name = "lerp";
  expect_arity(c, name, 3, 1);
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 3; ++i) expect_like(c.inputs[i], out, name);
  visit<plugin::op_class("lerp")>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    elementwise<T, T, T, T>(out, {&c.inputs[0], &c.inputs[1], &c.inputs[2]}, Lerp<T>{}, enter(c), name);
  });
}

}  // namespace

// In-place forms are the same kernels: outputs[0] aliases inputs[0] and the
// core has cast the other operands to self's dtype.
void register_binary_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  // The catalog's masks (loom/plugin/op_rules.hpp).
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "add", LOOM_GPU_NAME, kernel<add>);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "sub", LOOM_GPU_NAME, kernel<sub>);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "mul", LOOM_GPU_NAME, kernel<mul>);
  r.kernel("outer", LOOM_GPU_NAME, kernel<mul>, kAllMask);
  // Integers too: div with rounding_mode 'trunc'/'floor' stays integral.
  r.kernel("div", LOOM_GPU_NAME, kernel<div>, kNoBoolMask);
  r.kernel("div_", LOOM_GPU_NAME, kernel<div>, kNoBoolMask);
  plugin::register_binary_rows<ArithFamily>(r, LOOM_GPU_NAME);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "lerp", LOOM_GPU_NAME, kernel<lerp>);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::ew
