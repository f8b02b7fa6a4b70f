// 64-byte aligned host memory with a small per-thread cache of recently
// freed small blocks.
//
// Why a cache: the core allocates every op's output, and for tiny tensors
// glibc's aligned allocation (memalign: over-allocate, split, free the
// remainder) costs more than the whole kernel. Reusing a block of the same
// size class from a thread-local free list costs a few nanoseconds.
#pragma once

#include <cstddef>

namespace loom::cpu {

// Returns a 64-byte aligned block of at least `nbytes` (> 0), or NULL when
// the system is out of memory (or nbytes is absurd). Never throws.
void* host_allocate(size_t nbytes) noexcept;

// Releases a block from host_allocate (NULL is ignored). The block records
// its own size class, so a wrong size from the caller cannot corrupt the
// cache.
void host_free(void* ptr) noexcept;

}  // namespace loom::cpu
