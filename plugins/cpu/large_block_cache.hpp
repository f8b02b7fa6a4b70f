// large_block_cache.hpp — keeps recently freed large host blocks for reuse.
//
// Why: glibc serves large allocations with fresh mmap()s and returns them
// with munmap(), so every large output is page-faulted in again, one fault
// per 4 KiB page. For a 16M-element add that is 16K faults: the op ran at a
// third of memory bandwidth while an in-place add ran at full speed. Reusing
// the block of a tensor that just died removes the faults, as PyTorch's
// caching allocators do on GPUs.
//
// The cache is process-wide (a block freed on one thread serves another),
// bounded in bytes (LOOM_CPU_CACHE_MB; by default an eighth of physical
// memory, at least 1 GiB), emptied when the system refuses an allocation,
// and returns a block
// only when it is no more than 1/8 larger than asked, so memory is not
// wasted on mismatched sizes.
#pragma once

#include <cstddef>

namespace loom::cpu {

// Blocks at least this large go through the cache.
inline constexpr size_t kLargeBlock = size_t{8} << 10;

// A cached raw block whose capacity is at least `capacity` (and at most 1/8
// more), with its real capacity in *got; NULL when none fits.
void* large_block_take(size_t capacity, size_t* got) noexcept;

// Offers a raw block of `capacity` bytes; false when the cache is full (the
// caller then frees it).
bool large_block_give(void* raw, size_t capacity) noexcept;

// Frees every cached block (e.g. before a memory-hungry phase).
void large_block_release_all() noexcept;

}  // namespace loom::cpu
