// Planning the cuDNN convolutions (kernels/conv_cudnn.cu) without cuDNN:
// every op of the family becomes one pass of a forward convolution
//   x [N, C, H, W] (*) w [O, C/groups, kH, kW] -> y [N, O, OH, OW]
// (conv2d: Forward; conv_transpose2d and _conv2d_backward_input:
// BackwardData, writing x; _conv2d_backward_weight: BackwardFilter, writing
// w), and this header decides whether the shapes make sense (shape_problem,
// for every back end) and whether cuDNN's legacy API can express it,
// how the descriptors' strides look, and the algorithm cache's key. Plain
// C++, so tests/conv_plan_test.cu checks it on the host.
#pragma once

#include "vendor/gpu_target.hpp"

#include <loom/plugin/lru_cache.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE::conv {

enum class Pass : int { Forward, BackwardData, BackwardFilter };

// A 4-D operand: sizes and element strides.
struct Dims4 {
  int64_t size[4];
  int64_t stride[4];
};

struct Problem {
  int32_t dtype = 0;
  Pass pass = Pass::Forward;
  Dims4 x{}, w{}, y{};
  int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1}, groups = 1;
};

// The forward's output length along one dim (floor mode: input rows past
// the last full window are never read). May be <= 0 for inputs shorter
// than the dilated kernel.
inline int64_t forward_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  const int64_t span = in + 2 * padding - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// conv_transpose2d's output length: (in - 1) s - 2 p + d (k - 1) +
// output_padding + 1. Its forward (from that length) gives `in` back only
// while output_padding < stride, the case cuDNN's backward data covers.
inline int64_t transposed_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                                      int64_t output_padding) {
  return (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1;
}

// What makes `p` no convolution at all, or nullptr: x, w and y must agree
// on channels, groups and batch, y's height and width must be the forward's,
// stride and dilation must be >= 1 (the kernels divide by the stride) and
// padding >= 0. Every back end checks this (the callers read the shapes
// from the views): the own kernels (conv_direct.cu) only this,
// decline_reason adds cuDNN's limits.
inline const char* shape_problem(const Problem& p) {
  for (int i = 0; i < 2; ++i)
    if (p.stride[i] < 1 || p.dilation[i] < 1 || p.padding[i] < 0)
      return "stride and dilation must be positive and padding non-negative";
  if (p.groups <= 0 || p.x.size[1] != p.w.size[1] * p.groups || p.y.size[1] != p.w.size[0] ||
      p.w.size[0] % p.groups != 0 || p.x.size[0] != p.y.size[0])
    return "inconsistent shapes or groups";
  for (int i = 0; i < 2; ++i)
    if (forward_output_size(p.x.size[2 + i], p.w.size[2 + i], p.stride[i], p.padding[i], p.dilation[i]) !=
        p.y.size[2 + i])
      return "the output size is not the forward convolution's (output_padding >= stride, or a grad_output "
             "with fewer rows than the forward makes)";
  return nullptr;
}

// Why cuDNN's legacy API cannot run `p`, or nullptr when it can: the shape
// problems above, or a size or stride past its int parameters.
inline const char* decline_reason(const Problem& p) {
  const Dims4 *all[3] = {&p.x, &p.w, &p.y};
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  for (const Dims4* t : all)
    for (int i = 0; i < 4; ++i)
      if (t->size[i] > kIntMax || t->stride[i] > kIntMax || t->stride[i] < -kIntMax)
        return "a size or stride exceeds cuDNN's int range";
  return shape_problem(p);
}

// A tensor descriptor's strides: a size-1 dim's stride is arbitrary in
// loom, so it gets the packed stride it would have in row-major order
// (cuDNN checks the strides of size-1 dims too).
inline Dims4 tidy(const Dims4& t) {
  Dims4 out = t;
  for (int i = 3; i >= 0; --i) {
    if (t.size[i] != 1) continue;
    int64_t extent = 1;
    for (int j = i + 1; j < 4; ++j) extent = std::max(extent, out.stride[j] * out.size[j]);
    out.stride[i] = extent;
  }
  return out;
}

// Whether cuDNN can read `t` through a strided tensor descriptor as it is:
// every dim of size > 1 has a positive stride (no broadcast or reversed
// dims, which must be copied first).
inline bool readable_as_strided(const Dims4& t) {
  for (int i = 0; i < 4; ++i)
    if (t.size[i] > 1 && t.stride[i] <= 0) return false;
  return true;
}

// Filters have no strides in cuDNN: one of two packed layouts, NCHW
// ([O][C][kH][kW]) or NHWC ([O][kH][kW][C]); None means copy (an input) or
// decline (an output).
enum class FilterLayout { NCHW, NHWC, None };

inline bool packed_in_order(const Dims4& t, const int (&order)[4]) {
  int64_t expected = 1;
  for (int k = 3; k >= 0; --k) {
    const int d = order[k];
    if (t.size[d] != 1 && t.stride[d] != expected) return false;
    expected *= t.size[d];
  }
  return true;
}

inline FilterLayout filter_layout(const Dims4& t) {
  if (packed_in_order(t, {0, 1, 2, 3})) return FilterLayout::NCHW;
  if (packed_in_order(t, {0, 2, 3, 1})) return FilterLayout::NHWC;
  return FilterLayout::None;
}

// The algorithm cache's key: everything cuDNN's heuristics see.
inline std::vector<int64_t> cache_key(const Problem& p, int device, int math) {
  std::vector<int64_t> key{device, p.dtype, static_cast<int64_t>(p.pass), math, p.groups};
  for (int i = 0; i < 2; ++i) key.insert(key.end(), {p.stride[i], p.padding[i], p.dilation[i]});
  for (const Dims4* t : {&p.x, &p.w, &p.y}) {
    const Dims4 d = tidy(*t);
    key.insert(key.end(), d.size, d.size + 4);
    key.insert(key.end(), d.stride, d.stride + 4);
  }
  return key;
}

// cuDNN's heuristics are asked once per problem: loom's shared LRU cache.
template <class Entry>
using LruCache = plugin::LruCache<Entry>;

}  // namespace loom::LOOM_GPU_NAMESPACE::conv
