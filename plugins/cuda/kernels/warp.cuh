// Warp shuffles of any trivially copyable value (accumulators that are
// structs: {value, index}, {n, mean, m2}, ...), moved as 32-bit words.
// Every lane of the warp must call them (full mask).
#pragma once

#include "vendor/gpu_target.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::warp {

enum class Shfl { Down, Up, Idx };

template <Shfl K, class A>
__device__ inline A shuffle(const A& v, int arg, int width = 32) {
  static_assert(std::is_trivially_copyable_v<A>);
  constexpr int kWords = (sizeof(A) + 3) / 4;
  uint32_t w[kWords] = {};
  memcpy(w, &v, sizeof(A));
#pragma unroll
  for (int k = 0; k < kWords; ++k) {
    if constexpr (K == Shfl::Down) w[k] = __shfl_down_sync(0xffffffffu, w[k], arg, width);
    else if constexpr (K == Shfl::Up) w[k] = __shfl_up_sync(0xffffffffu, w[k], arg, width);
    else w[k] = __shfl_sync(0xffffffffu, w[k], arg, width);
  }
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}

template <class A>
__device__ inline A down(const A& v, int delta, int width = 32) { return shuffle<Shfl::Down>(v, delta, width); }
template <class A>
__device__ inline A up(const A& v, int delta) { return shuffle<Shfl::Up>(v, delta); }
template <class A>
__device__ inline A from_lane(const A& v, int lane) { return shuffle<Shfl::Idx>(v, lane); }

}  // namespace loom::LOOM_GPU_NAMESPACE::warp
