// Host-side pieces every elementwise CUDA kernel (unary*.cu, binary.cu,
// compare.cu) shares: argument checks that name the op and what was wrong,
// reading non-tensor values, entering the output's device and stream, and
// the family's registration functions. Checks cost a few branches on success.
#pragma once

#include "../runtime.hpp"
#include "dtype.cuh"

#include <loom/plugin.hpp>

#include "vendor/gpu_runtime.hpp"

#include <cstring>
#include <string>

namespace loom::LOOM_GPU_NAMESPACE::ew {

[[noreturn]] inline void fail_args(const char* op, const std::string& what) {
  throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": " + what);
}

inline void expect_arity(const LoomKernelCall& c, const char* op, int32_t inputs, int32_t outputs) {
  if (c.num_inputs != inputs || c.num_outputs != outputs) [[unlikely]]
    fail_args(op, "expected " + std::to_string(inputs) + " inputs and " + std::to_string(outputs) +
                      " outputs, got " + std::to_string(c.num_inputs) + " and " + std::to_string(c.num_outputs));
}

// `t` must have `ref`'s shape (elementwise inputs arrive broadcast) and,
// when `same_dtype`, its dtype.
inline void expect_like(const LoomTensorDesc& t, const LoomTensorDesc& ref, const char* op, bool same_dtype = true) {
  bool ok = t.ndim == ref.ndim && (!same_dtype || t.dtype == ref.dtype);
  for (int32_t d = 0; ok && d < ref.ndim; ++d) ok = t.shape[d] == ref.shape[d];
  if (!ok) [[unlikely]]
    fail_args(op, "an input does not match the output (ndim " + std::to_string(t.ndim) + " vs " +
                      std::to_string(ref.ndim) + ", dtype " + plugin::dtype_name(t.dtype) + " vs " +
                      plugin::dtype_name(ref.dtype) + ", or shape)");
}

inline void expect_bool_output(const LoomTensorDesc& out, const char* op) {
  if (out.dtype != LOOM_DTYPE_BOOL) [[unlikely]]
    fail_args(op, std::string("the output must be bool, got ") + plugin::dtype_name(out.dtype));
}

// The op's i-th non-tensor value, after checking there is one.
inline const LoomValue& value_at(const LoomKernelCall& c, const char* op, int32_t i) {
  if (c.num_values <= i) [[unlikely]]
    fail_args(op, "expected at least " + std::to_string(i + 1) + " non-tensor arguments, got " +
                      std::to_string(c.num_values));
  return c.values[i];
}

inline bool is_scalar_kind(const LoomValue& v) {
  return v.kind == LOOM_VALUE_BOOL || v.kind == LOOM_VALUE_INT || v.kind == LOOM_VALUE_FLOAT;
}

// A Scalar value as the host type C, cast as plugin/cast.hpp does. C may be
// plugin::Half / BFloat16 (the value rounded to the 16-bit format).
template <class C>
C scalar_arg(const LoomKernelCall& c, const char* op, int32_t i) {
  const LoomValue& v = value_at(c, op, i);
  switch (v.kind) {
    case LOOM_VALUE_BOOL: return plugin::cast<C>(v.u.i != 0);
    case LOOM_VALUE_INT: return plugin::cast<C>(static_cast<int64_t>(v.u.i));
    case LOOM_VALUE_FLOAT: return plugin::cast<C>(v.u.f);
    default: break;
  }
  fail_args(op, "argument " + std::to_string(i) + " must be a Scalar, got value kind " + std::to_string(v.kind));
}

// The host type holding device storage type T's values (plugin::Half for
// __half ...), for converting scalars with the shared rules.
template <class T> struct HostOf { using type = T; };
template <> struct HostOf<__half> { using type = plugin::Half; };
template <> struct HostOf<__nv_bfloat16> { using type = plugin::BFloat16; };

// A Scalar value rounded to dtype-type T (as the CPU's scalar_arg<T>), then
// in T's compute type: a float16 bound of 0.1 is float16's 0.1.
template <class T>
opmath_t<T> scalar_in_dtype(const LoomKernelCall& c, const char* op, int32_t i) {
  using H = typename HostOf<T>::type;
  if constexpr (is_half_v<T>) return static_cast<float>(scalar_arg<H>(c, op, i));
  else return scalar_arg<T>(c, op, i);
}

// Whether STRING value v is exactly `word`.
inline bool string_is(const LoomValue& v, const char* word) {
  const size_t n = std::strlen(word);
  return v.kind == LOOM_VALUE_STRING && v.u.str.size == static_cast<int64_t>(n) &&
         (n == 0 || std::memcmp(v.u.str.data, word, n) == 0);
}

// A STRING value for a message (at most 64 characters).
inline std::string string_of(const LoomValue& v) {
  if (v.kind != LOOM_VALUE_STRING) return "(value kind " + std::to_string(v.kind) + ")";
  const int64_t n = v.u.str.size < 0 ? 0 : v.u.str.size > 64 ? 64 : v.u.str.size;
  return "'" + std::string(v.u.str.data ? v.u.str.data : "", static_cast<size_t>(n)) + "'";
}

// Makes the output's device current and returns the call's stream.
inline cudaStream_t enter(const LoomKernelCall& c) {
  use_device(c.outputs[0].device.index);
  return static_cast<cudaStream_t>(c.stream);
}

// The family's registrations: unary.cu, unary_float.cu, binary.cu, compare.cu.
void register_unary_kernels(plugin::Registrar& r);
void register_unary_float_kernels(plugin::Registrar& r);
void register_binary_kernels(plugin::Registrar& r);
void register_compare_kernels(plugin::Registrar& r);

}  // namespace loom::LOOM_GPU_NAMESPACE::ew
