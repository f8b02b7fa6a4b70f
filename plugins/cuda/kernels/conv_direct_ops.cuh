// The per-element math of the own convolution kernels (kernels/conv_direct.cu),
// direct loops over what one written element sums, for the three passes of
//   x [N, C, H, W] (*) w [O, C/groups, kH, kW] -> y [N, O, OH, OW]
// (conv_plan.hpp), with Cg = C/groups, Og = O/groups and the group of
// output channel o g = o / Og:
//   forward          y[n,o,oh,ow] = bias[o] + sum_{c<Cg,kh,kw} x[n, g Cg + c, ih, iw] w[o,c,kh,kw]
//   backward data    x[n,ci,h,v]  = bias[ci] + sum over the o of ci's group and the (kh, kw) whose
//                                   window reaches (h, v) of y[n,o,oh,ow] w[o, ci % Cg, kh, kw]
//   backward filter  w[o,c,kh,kw] = sum_{n,oh,ow} y[n,o,oh,ow] x[n, g Cg + c, ih, iw]
// where ih = oh s0 - p0 + kh d0, iw = ow s1 - p1 + kw d1, and positions
// outside x add nothing. Backward data is a gather (h + p0 - kh d0 must be
// a multiple of s0 whose quotient oh lies in [0, OH)), so each element has
// one writer and needs no atomics; backward filter's long sum is split by
// the caller (a block's threads) through backward_filter_partial.
//
// Operands have any element strides (zero for broadcast inputs, negative
// for reversed dims), offsets are 64-bit, sums run in opmath_t<T> (float
// for the 16-bit floats). Host and device code, so
// tests/conv_direct_ops_test.cu checks it on the host against a naive loop.
#pragma once

#include "vendor/gpu_target.hpp"
#include "conv_plan.hpp"
#include "dtype.cuh"

#include <cstdint>

namespace loom::LOOM_GPU_NAMESPACE::conv {

// An optional per-channel bias ([channels], any stride), read in compute
// type; 0 where there is none.
template <class T>
struct Bias {
  const T* data;  // nullptr: no bias
  int64_t stride;
  LOOM_HD opmath_t<T> at(int64_t channel) const {
    return data == nullptr ? opmath_t<T>(0) : widen(data[channel * stride]);
  }
};

// Linear index i (row-major over t's sizes) as a 4-D position.
struct Index4 {
  int64_t at[4];
};
LOOM_HD inline Index4 unflatten(const Dims4& t, int64_t i) {
  Index4 r;
  for (int d = 3; d > 0; --d) {
    r.at[d] = i % t.size[d];
    i /= t.size[d];
  }
  r.at[0] = i;
  return r;
}

LOOM_HD inline int64_t offset_of(const Dims4& t, const Index4& i) {
  return i.at[0] * t.stride[0] + i.at[1] * t.stride[1] + i.at[2] * t.stride[2] + i.at[3] * t.stride[3];
}

// Forward: writes y's element i (row-major over y's sizes).
template <class T>
LOOM_HD void forward_element(const Problem& p, int64_t i, const T* x, const T* w, Bias<T> bias, T* y) {
  using A = opmath_t<T>;
  const Index4 at = unflatten(p.y, i);  // n, o, oh, ow
  const int64_t o = at.at[1], channels_per_group = p.w.size[1];
  const int64_t first_channel = o / (p.w.size[0] / p.groups) * channels_per_group;
  const int64_t x_plane = at.at[0] * p.x.stride[0] + first_channel * p.x.stride[1];
  const int64_t w_filter = o * p.w.stride[0];
  A sum = bias.at(o);
  // Rows and columns outer so the range checks run once per tap, not once
  // per channel.
  for (int64_t kh = 0; kh < p.w.size[2]; ++kh) {
    const int64_t ih = at.at[2] * p.stride[0] - p.padding[0] + kh * p.dilation[0];
    if (ih < 0 || ih >= p.x.size[2]) continue;
    for (int64_t kw = 0; kw < p.w.size[3]; ++kw) {
      const int64_t iw = at.at[3] * p.stride[1] - p.padding[1] + kw * p.dilation[1];
      if (iw < 0 || iw >= p.x.size[3]) continue;
      const int64_t x_at = x_plane + ih * p.x.stride[2] + iw * p.x.stride[3];
      const int64_t w_at = w_filter + kh * p.w.stride[2] + kw * p.w.stride[3];
      for (int64_t c = 0; c < channels_per_group; ++c)
        sum += widen(x[x_at + c * p.x.stride[1]]) * widen(w[w_at + c * p.w.stride[1]]);
    }
  }
  y[offset_of(p.y, at)] = narrow<T>(sum);
}

// The output row (or column) whose window reaches input position `in`
// through tap k, or -1 when none does: in + padding - k dilation must be a
// non-negative multiple of stride below `out_size`.
LOOM_HD inline int64_t source_output(int64_t in, int64_t k, int64_t stride, int64_t padding, int64_t dilation,
                                     int64_t out_size) {
  const int64_t t = in + padding - k * dilation;
  if (t < 0 || t % stride != 0) return -1;
  return t / stride < out_size ? t / stride : -1;
}

// Backward data: writes x's element i (row-major over x's sizes).
template <class T>
LOOM_HD void backward_data_element(const Problem& p, int64_t i, const T* y, const T* w, Bias<T> bias, T* x) {
  using A = opmath_t<T>;
  const Index4 at = unflatten(p.x, i);  // n, ci, h, v
  // x has elements only when C = Cg * groups > 0, so Cg divides safely.
  const int64_t channels_per_group = p.w.size[1], outputs_per_group = p.w.size[0] / p.groups;
  const int64_t first_output = at.at[1] / channels_per_group * outputs_per_group, c = at.at[1] % channels_per_group;
  const int64_t y_batch = at.at[0] * p.y.stride[0] + first_output * p.y.stride[1];
  const int64_t w_channel = first_output * p.w.stride[0] + c * p.w.stride[1];
  A sum = bias.at(at.at[1]);
  for (int64_t kh = 0; kh < p.w.size[2]; ++kh) {
    const int64_t oh = source_output(at.at[2], kh, p.stride[0], p.padding[0], p.dilation[0], p.y.size[2]);
    if (oh < 0) continue;
    for (int64_t kw = 0; kw < p.w.size[3]; ++kw) {
      const int64_t ow = source_output(at.at[3], kw, p.stride[1], p.padding[1], p.dilation[1], p.y.size[3]);
      if (ow < 0) continue;
      const int64_t y_at = y_batch + oh * p.y.stride[2] + ow * p.y.stride[3];
      const int64_t w_at = w_channel + kh * p.w.stride[2] + kw * p.w.stride[3];
      for (int64_t o = 0; o < outputs_per_group; ++o)
        sum += widen(y[y_at + o * p.y.stride[1]]) * widen(w[w_at + o * p.w.stride[0]]);
    }
  }
  x[offset_of(p.x, at)] = narrow<T>(sum);
}

// Backward filter: the number of terms of each weight element's sum, one
// per (n, oh, ow).
LOOM_HD inline int64_t backward_filter_terms(const Problem& p) { return p.y.size[0] * p.y.size[2] * p.y.size[3]; }

// Backward filter: the part of weight element i's sum (i row-major over w's
// sizes) made of the terms begin, begin + step, ... below end, terms
// numbered row-major over (n, oh, ow). A block's thread t takes
// begin = t, step = blockDim; the parts add up to the whole sum.
template <class T>
LOOM_HD opmath_t<T> backward_filter_partial(const Problem& p, int64_t i, const T* x, const T* y, int64_t begin,
                                             int64_t end, int64_t step) {
  using A = opmath_t<T>;
  const Index4 at = unflatten(p.w, i);  // o, c, kh, kw
  const int64_t o = at.at[0], ci = o / (p.w.size[0] / p.groups) * p.w.size[1] + at.at[1];
  // Output (oh, ow) reads input (oh s0 + h0, ow s1 + w0).
  const int64_t h0 = at.at[2] * p.dilation[0] - p.padding[0], w0 = at.at[3] * p.dilation[1] - p.padding[1];
  const int64_t OH = p.y.size[2], OW = p.y.size[3];
  const int64_t y_channel = o * p.y.stride[1], x_channel = ci * p.x.stride[1];
  A sum = 0;
  // No term exists when OW is 0 (end is then 0), so the divisions are safe.
  for (int64_t j = begin; j < end; j += step) {
    const int64_t ow = j % OW, rows = j / OW, oh = rows % OH, n = rows / OH;
    const int64_t ih = oh * p.stride[0] + h0, iw = ow * p.stride[1] + w0;
    if (ih < 0 || ih >= p.x.size[2] || iw < 0 || iw >= p.x.size[3]) continue;
    sum += widen(y[n * p.y.stride[0] + y_channel + oh * p.y.stride[2] + ow * p.y.stride[3]]) *
           widen(x[n * p.x.stride[0] + x_channel + ih * p.x.stride[2] + iw * p.x.stride[3]]);
  }
  return sum;
}

}  // namespace loom::LOOM_GPU_NAMESPACE::conv
