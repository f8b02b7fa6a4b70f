// The per-output-element math of the pooling kernels (kernels/pool.cu):
// which input rows/columns a window covers, the average's divisor and the
// running max with PyTorch's index and NaN rules. Host and device code, so
// tests/pool_ops_test.cu checks it without a GPU. The rules are the CPU
// plugin's (plugins/cpu/pool.cpp, docs/kernel_conventions.md "Convolution
// and pooling"); each 1-D helper is applied to rows and columns separately.
#pragma once

#include "dtype.cuh"

#include "vendor/gpu_runtime.hpp"

#include <cstdint>
#include <limits>
#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::pool {

// A max-pool window along one dim: the taps start + k * dilation for k in
// [k_begin, k_end) are the ones inside [0, length). Empty when k_end <=
// k_begin (only a degenerate ceil-mode window can be).
struct DilatedWindow {
  int64_t start, k_begin, k_end;
  __host__ __device__ int64_t position(int64_t k, int64_t dilation) const { return start + k * dilation; }
};

__host__ __device__ inline DilatedWindow dilated_window(int64_t out, int64_t kernel, int64_t stride,
                                                        int64_t padding, int64_t dilation, int64_t length) {
  const int64_t start = out * stride - padding;
  // First tap at or after 0 and one past the last tap before length (ceil
  // divisions on non-negative numerators; a negative one means no tap).
  const int64_t k_begin = start < 0 ? (-start + dilation - 1) / dilation : 0;
  const int64_t room = length - start;
  const int64_t k_end_in = room <= 0 ? 0 : (room + dilation - 1) / dilation;
  return {start, k_begin, k_end_in < kernel ? k_end_in : kernel};
}

// An average-pool window along one dim: [begin, end) is summed (clipped to
// the input); padded_extent is its length before clipping, but never past
// the padding (what count_include_pad divides by).
struct AvgWindow {
  int64_t begin, end, padded_extent;
};

__host__ __device__ inline AvgWindow avg_window(int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                                                int64_t length) {
  const int64_t start = out * stride - padding;
  const int64_t stop = start + kernel < length + padding ? start + kernel : length + padding;
  return {start > 0 ? start : 0, stop < length ? stop : length, stop - start};
}

// The average's divisor: divisor_override when given (has_override), else
// the padded area (count_include_pad) or the clipped one.
__host__ __device__ inline int64_t avg_divisor(const AvgWindow& rows, const AvgWindow& cols, bool count_include_pad,
                                               bool has_override, int64_t override_value) {
  if (has_override) return override_value;
  if (count_include_pad) return rows.padded_extent * cols.padded_extent;
  return (rows.end - rows.begin) * (cols.end - cols.begin);
}

// Adaptive pooling: output i of n covers input [floor(i*L/n), ceil((i+1)*L/n)).
struct Span {
  int64_t begin, end;
};
__host__ __device__ inline Span adaptive_span(int64_t out, int64_t out_size, int64_t length) {
  return {out * length / out_size, ((out + 1) * length + out_size - 1) / out_size};
}

// The running max of a window with the flat position of its winner. Starts
// at -inf with the window's first in-range position (so an all -inf window
// reports that); a larger value or any NaN replaces it, so the first of equal
// values and the last NaN win, as the CPU loop's visiting order gives.
template <class A>
struct MaxWithIndex {
  A best;
  int64_t at;
  __host__ __device__ void step(A v, int64_t position) {
    if (v > best || v != v) {
      best = v;
      at = position;
    }
  }
};

// Averages accumulate in double for floats and int64 for integers.
template <class T>
using avg_acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

template <class T>
__host__ __device__ inline avg_acc_t<T> to_acc(T v) {
  if constexpr (std::is_same_v<T, __half>) return static_cast<double>(__half2float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return static_cast<double>(__bfloat162float(v));
  else return static_cast<avg_acc_t<T>>(v);
}

// The window's mean stored as T: integers divide truncating (and wrap to
// T's width, as the CPU's cast does), floats round once from double. An
// empty window (sum of nothing) is 0.
template <class T>
__host__ __device__ inline T avg_result(avg_acc_t<T> sum, int64_t divisor, bool empty) {
  if (empty) return T(0.0f);
  const avg_acc_t<T> v = sum / static_cast<avg_acc_t<T>>(divisor);
  if constexpr (std::is_same_v<T, __half>) return __double2half(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __double2bfloat16(v);
  else return static_cast<T>(v);
}

// Sizes and element strides of the input x [N, C, H, W], the output y
// [N, C, OH, OW] and the indices (zero strides when there are none), and
// the window parameters (dilation 1 where an op has none).
struct PoolGeometry {
  int64_t N, C, H, W, OH, OW;
  int64_t xs[4], ys[4], is[4];
  int64_t kernel[2], stride[2], padding[2], dilation[2];
};

// Output (n, c, i, j) of linear index `o` (row-major over [N, C, OH, OW]):
// i, j, and the element offsets of x's plane, of y's element and of the
// index's element.
struct OutputSite {
  int64_t i, j, x_plane, y_at, i_at;
};
__host__ __device__ inline OutputSite site_of(const PoolGeometry& g, int64_t o) {
  const int64_t j = o % g.OW;
  o /= g.OW;
  const int64_t i = o % g.OH;
  o /= g.OH;
  const int64_t c = o % g.C, n = o / g.C;
  return {i, j, n * g.xs[0] + c * g.xs[1], n * g.ys[0] + c * g.ys[1] + i * g.ys[2] + j * g.ys[3],
          n * g.is[0] + c * g.is[1] + i * g.is[2] + j * g.is[3]};
}

// max_pool2d for output `o`: the window's max (16-bit floats compare in
// float) and, with kIndices, the winner's ih * W + iw.
template <class T, bool kIndices>
__host__ __device__ void max_pool_output(const PoolGeometry& g, int64_t o, const T* x, T* y, int64_t* indices) {
  using A = opmath_t<T>;
  const OutputSite s = site_of(g, o);
  const DilatedWindow r = dilated_window(s.i, g.kernel[0], g.stride[0], g.padding[0], g.dilation[0], g.H);
  const DilatedWindow c = dilated_window(s.j, g.kernel[1], g.stride[1], g.padding[1], g.dilation[1], g.W);
  MaxWithIndex<A> m{-std::numeric_limits<A>::infinity(),
                    r.position(r.k_begin, g.dilation[0]) * g.W + c.position(c.k_begin, g.dilation[1])};
  for (int64_t kh = r.k_begin; kh < r.k_end; ++kh) {
    const int64_t ih = r.position(kh, g.dilation[0]);
    const T* row = x + s.x_plane + ih * g.xs[2];
    for (int64_t kw = c.k_begin; kw < c.k_end; ++kw) {
      const int64_t iw = c.position(kw, g.dilation[1]);
      m.step(widen(row[iw * g.xs[3]]), ih * g.W + iw);
    }
  }
  y[s.y_at] = narrow<T>(m.best);
  if constexpr (kIndices) indices[s.i_at] = m.at;
}

// avg_pool2d's options: count_include_pad and divisor_override (when given).
struct AvgOptions {
  bool count_include_pad, has_divisor_override;
  int64_t divisor_override;
};

template <class T>
__host__ __device__ void avg_pool_output(const PoolGeometry& g, int64_t o, const T* x, T* y, AvgOptions opt) {
  const OutputSite s = site_of(g, o);
  const AvgWindow r = avg_window(s.i, g.kernel[0], g.stride[0], g.padding[0], g.H);
  const AvgWindow c = avg_window(s.j, g.kernel[1], g.stride[1], g.padding[1], g.W);
  avg_acc_t<T> sum = 0;
  for (int64_t ih = r.begin; ih < r.end; ++ih)
    for (int64_t iw = c.begin; iw < c.end; ++iw) sum += to_acc(x[s.x_plane + ih * g.xs[2] + iw * g.xs[3]]);
  const bool empty = r.begin >= r.end || c.begin >= c.end;
  y[s.y_at] = avg_result<T>(
      sum, avg_divisor(r, c, opt.count_include_pad, opt.has_divisor_override, opt.divisor_override), empty);
}

template <class T>
__host__ __device__ void adaptive_avg_output(const PoolGeometry& g, int64_t o, const T* x, T* y) {
  const OutputSite s = site_of(g, o);
  const Span r = adaptive_span(s.i, g.OH, g.H), c = adaptive_span(s.j, g.OW, g.W);
  double sum = 0;
  for (int64_t ih = r.begin; ih < r.end; ++ih)
    for (int64_t iw = c.begin; iw < c.end; ++iw) sum += to_acc(x[s.x_plane + ih * g.xs[2] + iw * g.xs[3]]);
  // Windows are empty only for empty planes: 0 / 0 is NaN, as on the CPU.
  y[s.y_at] = avg_result<T>(sum, (r.end - r.begin) * (c.end - c.begin), false);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::pool
