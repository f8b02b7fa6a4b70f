// How the fused row kernels (softmax.cu, layer_norm.cu) spread rows over
// threads, and the reductions that merge a row's partial states
// (row_ops.cuh) across those threads.
//
// A row is handled by a group of RowThreads threads:
//   - 1: one thread walks the row alone. For rows whose elements are
//     strided (softmax over a dim that is not innermost): neighbouring
//     threads then read neighbouring rows, which is coalesced;
//   - 32: a warp per row, for rows up to kWarpRowMax elements;
//   - kBlockRowThreads: a whole block per row, for long rows.
// Every thread of a group gets the merged state, taken from one lane (the
// tree runs once, to lane 0, then is broadcast), so every element of a row
// is computed with bit-identical statistics.
#pragma once

#include "row_ops.cuh"

#include "vendor/gpu_runtime.hpp"

#include <cstdint>
#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::rows {

inline constexpr int kBlockRowThreads = 256;
inline constexpr int64_t kWarpRowMax = 1024;
inline constexpr unsigned kFullMask = 0xffffffffu;

// One state from lane `src` of the warp / from `delta` lanes up (every
// lane must call them). int64_t (long) counts shuffle as they are.
template <class S>
__device__ inline S shfl(const S& v, int src) {
  return v.map([src](auto f) { return __shfl_sync(kFullMask, f, src); });
}
template <class S>
__device__ inline S shfl_down(const S& v, int delta) {
  return v.map([delta](auto f) { return __shfl_down_sync(kFullMask, f, delta); });
}

// The warp's states merged into lane 0 (other lanes hold partial merges).
template <class S>
__device__ inline S warp_to_lane0(S s) {
  for (int delta = 16; delta > 0; delta /= 2) s.combine(shfl_down(s, delta));
  return s;
}

// The merged state of the whole group, in every thread of it. The block
// form ends with a barrier, so a grid-stride loop may call it again.
template <int RowThreads, class S>
__device__ inline S merge_row(S s) {
  if constexpr (RowThreads == 1) {
    return s;
  } else if constexpr (RowThreads == 32) {
    return shfl(warp_to_lane0(s), 0);
  } else {
    static_assert(RowThreads % 32 == 0 && RowThreads <= 1024, "a block row group is whole warps");
    // Raw storage: a __shared__ variable cannot have a constructor. (The
    // alignment sits on a type: clang takes no alignas after __shared__.)
    struct alignas(S) Raw {
      unsigned char bytes[(RowThreads / 32) * sizeof(S)];
    };
    __shared__ Raw raw;
    S* partial = reinterpret_cast<S*>(raw.bytes);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    s = warp_to_lane0(s);
    if (lane == 0) partial[warp] = s;
    __syncthreads();
    if (warp == 0) {
      s = lane < RowThreads / 32 ? partial[lane] : S{};
      s = warp_to_lane0(s);
      if (lane == 0) partial[0] = s;
    }
    __syncthreads();
    s = partial[0];
    __syncthreads();  // everyone has read partial[0] before it is written again
    return s;
  }
}

// The group of the calling thread: the first row it handles, the stride to
// its next row, and its lane within the group.
template <int RowThreads>
struct RowGroup {
  int64_t first, step;
  int lane;

  __device__ RowGroup() {
    const int64_t groups = blockDim.x / RowThreads;
    first = blockIdx.x * groups + threadIdx.x / RowThreads;
    step = int64_t{gridDim.x} * groups;
    lane = static_cast<int>(threadIdx.x % RowThreads);
  }
};

// The launch for `rows` rows of `n` elements. `strided`: the row's
// elements are not adjacent in memory (thread-per-row then pays off when
// there are enough rows to fill the GPU).
struct RowLaunch {
  int row_threads;  // 1, 32 or kBlockRowThreads
  unsigned block;
  unsigned grid;
};

inline RowLaunch pick_row_launch(int64_t rows, int64_t n, bool strided) {
  RowLaunch l{};
  if ((strided && rows >= 2048) || (n <= 16 && rows >= 4096)) l.row_threads = 1;
  else if (n <= kWarpRowMax) l.row_threads = 32;
  else l.row_threads = kBlockRowThreads;
  l.block = l.row_threads == kBlockRowThreads ? kBlockRowThreads : 128;
  const int64_t groups = l.block / l.row_threads;
  const int64_t blocks = (rows + groups - 1) / groups;
  constexpr int64_t kMaxGrid = int64_t{65535} * 8;  // grid-stride loops cover the rest
  l.grid = static_cast<unsigned>(blocks < 1 ? 1 : blocks > kMaxGrid ? kMaxGrid : blocks);
  return l;
}

// Calls f(std::integral_constant<int, RowThreads>{}) for l.row_threads, so
// the caller instantiates its kernel for the three group sizes.
template <class F>
void with_row_threads(const RowLaunch& l, F&& f) {
  switch (l.row_threads) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 32: return f(std::integral_constant<int, 32>{});
    default: return f(std::integral_constant<int, kBlockRowThreads>{});
  }
}

}  // namespace loom::LOOM_GPU_NAMESPACE::rows
