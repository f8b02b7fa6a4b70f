// What the row normalisations' kernels share (nn_norm.cpp: layer_norm and
// rms_norm; nn_norm_backward.cpp: their gradient ops): the compute type,
// one row's statistics, the per-feature parameters in the compute type, and
// the check of normalized_shape against the call. Rows are contiguous: the
// kernels are registered CONTIGUOUS_ONLY.
#pragma once

#include "common.hpp"
#include "nn_math.hpp"

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace loom::cpu::norm {

using nnmath::acc_t;

// Mean and 1/sqrt(var + eps) (biased variance, as PyTorch) of one row, two
// passes so there is no cancellation; not Centred (rms_norm): mean 0 and
// 1/sqrt(mean(x²) + eps).
template <int B, bool Centred, class C>
[[gnu::always_inline]] inline void row_stats(const C* x, int64_t n, C eps, C& mean, C& rstd) {
  if constexpr (std::is_same_v<C, float>) {
    mean = Centred ? nnmath::sum_span<B>(x, n) / static_cast<float>(n) : 0.0f;
    rstd = 1.0f / std::sqrt(nnmath::sq_dev_span<B>(x, n, mean) / static_cast<float>(n) + eps);
  } else {
    double s = 0;
    if constexpr (Centred)
      for (int64_t i = 0; i < n; ++i) s += x[i];
    mean = s / static_cast<double>(n);
    double q = 0;
    for (int64_t i = 0; i < n; ++i) q += (x[i] - mean) * (x[i] - mean);
    rstd = 1.0 / std::sqrt(q / static_cast<double>(n) + eps);
  }
}

// A weight or bias in the compute type: the tensor itself for float and
// double, a widened copy for the 16-bit floats; null when absent.
template <class T>
const acc_t<T>* param(const LoomTensorDesc& t, std::vector<acc_t<T>>& copy, int64_t n) {
  if (plugin::is_absent(t)) return nullptr;
  const T* p = plugin::data_ptr<const T>(t);
  if constexpr (std::is_same_v<T, acc_t<T>>) {
    return p;
  } else {
    copy.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) copy[i] = static_cast<float>(p[i]);
    return copy.data();
  }
}

// The row length: the product of normalized_shape (values[0], at most
// in.ndim dims), after checking that inputs [first, first + params) (the
// weight, the bias) are absent or have that many elements of in's dtype.
inline int64_t row_length(const LoomKernelCall& c, const char* op, const LoomTensorDesc& in, int first, int params) {
  const LoomValue& shape = c.values[0];
  if (shape.kind != LOOM_VALUE_INT_LIST || shape.u.ints.size > in.ndim) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: normalized_shape must be an int list of at most %d dims", op,
         in.ndim);
  int64_t n = 1;
  for (int64_t i = 0; i < shape.u.ints.size; ++i) n *= shape.u.ints.data[i];
  for (int i = first; i < first + params; ++i) {
    const LoomTensorDesc& p = c.inputs[i];
    if (!plugin::is_absent(p) && (plugin::numel(p) != n || p.dtype != in.dtype)) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: %s must have %lld elements of dtype %s", op,
           i == first ? "weight" : "bias", static_cast<long long>(n), plugin::dtype_name(in.dtype));
  }
  return n;
}

}  // namespace loom::cpu::norm
