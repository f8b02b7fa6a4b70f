// The math of batch_norm's evaluation-mode backward on CUDA (own kernels in
// batch_norm_cudnn.cu; cuDNN has none: its backward always recomputes the
// batch statistics). With the running statistics fixed, per channel c:
//
//   x̂ = (x - mean_c) · rstd_c,  rstd_c = 1 / √(var_c + eps)
//   grad_input  = g · w_c · rstd_c
//   grad_weight = Σ g · x̂,  grad_bias = Σ g   (over every dim but C)
//
// The input is contiguous [N, C, S]: channel c's j-th element (j < N·S) sits
// at (j / S)·C·S + c·S + j % S. __host__ __device__, so the whole two-pass
// algorithm runs on the host in tests/batch_norm_ops_test.cu.
#pragma once

#include "dtype.cuh"
#include "vendor/gpu_target.hpp"

#include <cmath>
#include <cstdint>

namespace loom::LOOM_GPU_NAMESPACE::bn {

// A channel's partial sums Σ g and Σ g·x̂, mergeable in any tree order
// (rows::merge_row's interface: combine and map).
template <class A>
struct ChannelSums {
  A g = 0, gx = 0;

  __host__ __device__ void combine(const ChannelSums& o) {
    g += o.g;
    gx += o.gx;
  }
  template <class F>
  __host__ __device__ ChannelSums map(F f) const {
    ChannelSums r;
    r.g = f(g);
    r.gx = f(gx);
    return r;
  }
};

// What one channel's elements need: its mean, rstd and w · rstd.
template <class A>
struct EvalChannel {
  A mean, rstd, scale;
};

// From the staged parameters (P: float, or double for float64 inputs);
// w is 1 when the op has no weight.
template <class A, class P>
__host__ __device__ inline EvalChannel<A> eval_channel(P w, P mean, P var, double eps) {
  const A v = static_cast<A>(var) + static_cast<A>(eps);
  A root;
  if constexpr (sizeof(A) == 4) root = ::sqrtf(v);
  else root = ::sqrt(v);
  const A rstd = A(1) / root;
  return {static_cast<A>(mean), rstd, static_cast<A>(w) * rstd};
}

// Elements first, first + step, ... (< end) of channel c: writes their
// grad_input and returns their sums. One thread's share of a block's chunk.
// Element j sits at row j / S, column j % S; the loop carries (row, column)
// forward by (step / S, step % S) instead of dividing per element (a 64-bit
// divide is a long instruction sequence on a GPU, longer than the element's
// own math).
template <class T, class A>
__host__ __device__ inline ChannelSums<A> eval_backward_range(const T* g, const T* x, T* dx, int64_t c, int64_t C,
                                                              int64_t S, int64_t first, int64_t end, int64_t step,
                                                              const EvalChannel<A>& k) {
  ChannelSums<A> s;
  if (first >= end) return s;
  const int64_t row_stride = C * S, row_step = step / S, col_step = step % S;
  int64_t row = first / S, col = first % S;
  for (int64_t j = first; j < end; j += step) {
    const int64_t o = row * row_stride + c * S + col;
    const A gj = static_cast<A>(widen(g[o]));
    s.g += gj;
    s.gx += gj * ((static_cast<A>(widen(x[o])) - k.mean) * k.rstd);
    dx[o] = narrow<T>(static_cast<opmath_t<T>>(gj * k.scale));
    row += row_step;
    col += col_step;
    if (col >= S) {  // col_step < S, so one carry at most
      col -= S;
      ++row;
    }
  }
  return s;
}

// A channel's sums from its `parts` partial sums, added in order.
template <class A>
__host__ __device__ inline ChannelSums<A> sum_parts(const ChannelSums<A>* parts, int64_t n) {
  ChannelSums<A> s;
  for (int64_t i = 0; i < n; ++i) s.combine(parts[i]);
  return s;
}

}  // namespace loom::LOOM_GPU_NAMESPACE::bn
