// host_memory_stats.hpp — the CPU allocator's bookkeeping for
// loom::memory_stats(cpu) / loom.memory_allocated("cpu"), which PyTorch's
// CPU allocator does not keep.
//
// Counted: blocks of kLargeBlock (8 KiB) and more — every activation-sized
// tensor. Smaller blocks come from bounded per-thread caches (well under
// 128 KiB a thread, host_allocator.cpp) and are not counted: counting them
// would put an atomic on the allocator's fastest path, which every small
// op's output takes. "Reserved" is what the allocator holds from the
// system: blocks handed out plus the large-block cache's.
#pragma once

#include <loom/plugin_api.h>

#include <cstddef>

namespace loom::cpu {

// A large block of `bytes` went to a tensor; `from_cache`: out of the
// large-block cache rather than new from the system.
void stats_handed_out(size_t bytes, bool from_cache) noexcept;
// A large block of `bytes` came back from a tensor.
void stats_returned(size_t bytes) noexcept;
// `bytes` more (or fewer) held from the system.
void stats_reserved_grew(size_t bytes) noexcept;
void stats_reserved_shrank(size_t bytes) noexcept;
// An allocation the system refused.
void stats_oom() noexcept;

// The figures into the host's struct (only the fields it has).
void fill_memory_stats(LoomMemoryStats* out) noexcept;
// Restarts the max_* figures from the current ones.
void reset_peak_memory_stats() noexcept;

}  // namespace loom::cpu
