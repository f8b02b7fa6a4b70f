// size_policy.hpp — how request sizes map to block and segment sizes.
//
// The numbers are PyTorch's CUDACachingAllocator's, for the same reasons:
//  - Rounding every request to 512 B keeps blocks aligned for any dtype and
//    vector load, and makes near-equal sizes interchangeable in the cache.
//  - Small requests (<= 1 MiB) are carved out of 2 MiB segments so that many
//    small tensors cost one cudaMalloc, and small and large requests never
//    share a segment (a long-lived small tensor cannot pin a large segment).
//  - Medium requests (< 10 MiB) get a 20 MiB segment, to be split among
//    several such tensors; big ones get exactly their size rounded to 2 MiB,
//    so one huge tensor does not reserve much more than it needs.
//  - A block is split only when the rest is worth keeping: any 512 B block
//    in the small pool, but only more than 1 MiB in the large pool; smaller
//    remnants of large blocks would only fragment the pool.
#pragma once

#include <cstddef>

namespace loom::gpu::detail {

inline constexpr size_t kMiB = size_t{1} << 20;
inline constexpr size_t kMinBlockSize = 512;
inline constexpr size_t kSmallRequestLimit = 1 * kMiB;
inline constexpr size_t kSmallSegmentSize = 2 * kMiB;
inline constexpr size_t kMediumRequestLimit = 10 * kMiB;
inline constexpr size_t kMediumSegmentSize = 20 * kMiB;
inline constexpr size_t kLargeSegmentRounding = 2 * kMiB;
// Requests above this cannot be rounded without overflowing size_t; no
// device has that much memory, so they are out of memory outright.
inline constexpr size_t kMaxRequest = ~size_t{0} - kLargeSegmentRounding;

constexpr size_t round_up(size_t n, size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// The block size that serves a request of `bytes` (0 < bytes <= kMaxRequest).
constexpr size_t rounded_block_size(size_t bytes) {
  return round_up(bytes, kMinBlockSize);
}

// Whether a rounded block size belongs to the small pool.
constexpr bool is_small_block(size_t rounded) {
  return rounded <= kSmallRequestLimit;
}

// The segment to take from the device when no cached block fits.
constexpr size_t segment_size_for(size_t rounded) {
  if (is_small_block(rounded)) return kSmallSegmentSize;
  if (rounded < kMediumRequestLimit) return kMediumSegmentSize;
  return round_up(rounded, kLargeSegmentRounding);
}

// Whether a free block of `block_size` serving `rounded` keeps the rest as
// a block of its own.
constexpr bool should_split(size_t block_size, size_t rounded) {
  const size_t remaining = block_size - rounded;
  return is_small_block(rounded) ? remaining >= kMinBlockSize
                                 : remaining > kSmallRequestLimit;
}

}  // namespace loom::gpu::detail
