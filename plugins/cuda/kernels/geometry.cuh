// Strided addressing for elementwise CUDA kernels. The host simplifies the
// operands' shape and strides with plugin::StridedIter (size-1 dims dropped,
// dims contiguous in every operand merged), so most tensors arrive as one
// dim; the kernel turns a linear index into per-operand element offsets by
// peeling dims from the innermost. Passed by value as a kernel argument.
#pragma once

#include "vendor/gpu_target.hpp"

#include <loom/plugin/strided.hpp>
#include <loom/plugin_api.h>

#include <cstdint>

namespace loom::LOOM_GPU_NAMESPACE {

// Dims a kernel addresses after simplification; more is declined
// (LOOM_STATUS_UNSUPPORTED, the core then falls back) — it takes a tensor
// with 13 dims of size >= 2 that no two of which merge.
inline constexpr int kMaxKernelDims = 12;

template <int N>
struct Geometry {
  int32_t ndim;
  int64_t numel;
  int64_t shape[kMaxKernelDims];
  int64_t strides[N][kMaxKernelDims];

  // Element offsets of operand k for linear (row-major) index i (host too:
  // the attention tile algorithm runs in host tests).
  __host__ __device__ void offsets(int64_t i, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = i / shape[d], r = i - q * shape[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += r * strides[k][d];
      i = q;
    }
  }
  // Whether every operand is one dense run (offset = index).
  __host__ __device__ bool dense() const {
    if (ndim != 1) return numel <= 1;
    for (int k = 0; k < N; ++k)
      if (strides[k][0] != 1) return false;
    return true;
  }
};

// The geometry of `shape` walked with each operand's strides; false when it
// needs more than kMaxKernelDims dims.
template <int N>
inline bool make_geometry(int32_t ndim, const int64_t* shape, const int64_t* const (&strides)[N], Geometry<N>& g) {
  plugin::StridedIter<N> it;
  g.numel = it.init(ndim, shape, strides);
  if (it.ndim > kMaxKernelDims) return false;
  g.ndim = it.ndim;
  for (int d = 0; d < it.ndim; ++d) {
    g.shape[d] = it.shape[d];
    for (int k = 0; k < N; ++k) g.strides[k][d] = it.strides[k][d];
  }
  return true;
}

// A grid covering n elements with 256-thread blocks, capped so huge tensors
// use grid-stride loops.
inline dim3 grid_for(int64_t n) {
  const int64_t blocks = (n + 255) / 256;
  return dim3(static_cast<unsigned>(blocks < 65535 * 8 ? (blocks > 0 ? blocks : 1) : 65535 * 8));
}
inline constexpr unsigned kBlock = 256;

}  // namespace loom::LOOM_GPU_NAMESPACE
