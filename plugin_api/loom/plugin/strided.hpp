// loom/plugin/strided.hpp — walking N same-shaped strided tensors together,
// for host-side kernels.
//
// `StridedIter<N>` takes one logical shape and N stride vectors (in elements;
// 0 = broadcast) and simplifies them the way every elementwise loop wants:
// size-1 dims are dropped and neighbouring dims that are contiguous with each
// other in EVERY operand are merged, so a contiguous or a simply broadcast
// tensor becomes one long inner run. It then hands out runs of the innermost
// dim — (element offsets per operand, length) — for any range of row-major
// linear indices, so a caller may split [0, numel) across threads and each
// thread starts where its range starts.
//
// Everything lives on the stack: no allocation, no exceptions. Once size-1
// dims are gone, every dim has size >= 2, so a tensor with < 2^63 elements
// has at most 62 of them and kMaxIterDims always suffices.
#pragma once

#include <cstdint>

namespace loom::plugin {

inline constexpr int kMaxIterDims = 64;

template <int N>
struct StridedIter {
  int32_t ndim;                       // >= 1 after init
  int64_t numel;
  int64_t shape[kMaxIterDims];        // [ndim], outermost first
  int64_t strides[N][kMaxIterDims];   // [operand][ndim], in elements

  // `operand_strides[k]` has `in_ndim` entries for operand k. Returns numel.
  // A tensor with no elements gives ndim 1, shape {0}.
  int64_t init(int32_t in_ndim, const int64_t* in_shape, const int64_t* const* operand_strides) {
    ndim = 0;
    numel = 1;
    for (int32_t d = 0; d < in_ndim; ++d) {
      const int64_t size = in_shape[d];
      if (size == 1) continue;
      if (size == 0) {
        numel = 0;
        break;
      }
      numel *= size;
      bool merge = ndim > 0;
      for (int k = 0; k < N && merge; ++k)
        merge = strides[k][ndim - 1] == operand_strides[k][d] * size;
      if (merge) {
        shape[ndim - 1] *= size;
        for (int k = 0; k < N; ++k) strides[k][ndim - 1] = operand_strides[k][d];
      } else {
        shape[ndim] = size;
        for (int k = 0; k < N; ++k) strides[k][ndim] = operand_strides[k][d];
        ++ndim;
      }
    }
    if (numel == 0 || ndim == 0) {  // empty, or a single element
      ndim = 1;
      shape[0] = numel;
      for (int k = 0; k < N; ++k) strides[k][0] = 0;
    }
    return numel;
  }

  int64_t inner_size() const { return shape[ndim - 1]; }
  int64_t inner_stride(int k) const { return strides[k][ndim - 1]; }

  // Calls f(const int64_t* offsets /*[N]*/, int64_t count) for each run of
  // the innermost dim covering linear indices [begin, end), in order.
  // offsets[k] is operand k's element offset of the run's first element;
  // consecutive elements of a run are inner_stride(k) apart.
  template <class F>
  void for_each_run(int64_t begin, int64_t end, F&& f) const {
    if (begin >= end) return;
    const int32_t outer = ndim - 1;
    const int64_t inner = shape[outer];
    int64_t idx[kMaxIterDims];
    int64_t row[N];  // offsets of the current row's first element
    int64_t pos = begin % inner;
    int64_t rest = begin / inner;
    for (int k = 0; k < N; ++k) row[k] = 0;
    for (int32_t d = outer - 1; d >= 0; --d) {
      idx[d] = rest % shape[d];
      rest /= shape[d];
      for (int k = 0; k < N; ++k) row[k] += idx[d] * strides[k][d];
    }
    int64_t remaining = end - begin;
    int64_t off[N];
    for (;;) {
      const int64_t n = inner - pos < remaining ? inner - pos : remaining;
      for (int k = 0; k < N; ++k) off[k] = row[k] + pos * strides[k][outer];
      f(static_cast<const int64_t*>(off), n);
      remaining -= n;
      if (remaining == 0) return;
      pos = 0;
      for (int32_t d = outer - 1; d >= 0; --d) {  // odometer step
        for (int k = 0; k < N; ++k) row[k] += strides[k][d];
        if (++idx[d] < shape[d]) break;
        for (int k = 0; k < N; ++k) row[k] -= shape[d] * strides[k][d];
        idx[d] = 0;
      }
    }
  }
};

}  // namespace loom::plugin
