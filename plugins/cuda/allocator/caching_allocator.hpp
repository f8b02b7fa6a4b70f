// caching_allocator.hpp — the CUDA plugin's device memory allocator.
//
// cudaMalloc and cudaFree are slow and cudaFree synchronizes the device, so
// memory a tensor releases is kept and handed to the next tensor instead, as
// PyTorch's CUDACachingAllocator does (docs/cuda_allocator.md has the policy
// and the reasons):
//  - requests round up to 512 B; small ones (<= 1 MiB) are cut from 2 MiB
//    segments, large ones from segments of at least 20 MiB (size_policy.hpp);
//  - free blocks live in a small and a large pool; a request takes the best
//    fit among blocks of its own stream, splitting off the rest when it is
//    worth keeping; a freed block merges with its free neighbours;
//  - a block used on other streams (record_stream) is reused only after an
//    event recorded on each of them at free time has completed;
//  - when the device refuses a segment, the cache is returned to it and the
//    request retried once before OutOfMemory.
// Thread-safe: every public call takes one mutex. Device calls happen under
// it, so a slow cudaMalloc stalls other threads' allocations (as in PyTorch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <loom/plugin_api.h>

#include "allocator_backend.hpp"
#include "block_pool.hpp"
#include "out_of_memory.hpp"

namespace loom::gpu {

class CachingAllocator {
 public:
  using Stream = AllocatorBackend::Stream;

  // What the allocator holds and has done. Byte counts are of rounded
  // blocks (block_size), not of the sizes asked for.
  struct Stats {
    size_t allocated = 0;      // in blocks handed out and not freed
    size_t max_allocated = 0;  // peak of `allocated` since reset_peak
    size_t reserved = 0;       // in segments taken from the device
    size_t max_reserved = 0;   // peak of `reserved` since reset_peak
    uint64_t num_allocs = 0;         // allocate calls served (0 bytes excluded)
    uint64_t num_cache_hits = 0;     // of those, served without a new segment
    uint64_t num_device_allocs = 0;  // segments taken from the device
    uint64_t num_ooms = 0;           // allocate calls that threw OutOfMemory
  };

  // `backend` must outlive the allocator; `device_index` and `runtime`
  // ("CUDA", "HIP": a static string) only name the device in messages.
  CachingAllocator(AllocatorBackend& backend, int device_index, const char* runtime = "CUDA");
  // Returns every segment to the device, in use or not (the tensors in them
  // must be dead by then).
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `bytes` to be used on `stream`; nullptr for 0 bytes
  // (the device is not touched). Throws OutOfMemory.
  void* allocate(size_t bytes, Stream stream);
  // Returns a block from allocate; nullptr is ignored. Throws
  // std::invalid_argument for a pointer this allocator did not hand out or
  // that was already freed.
  void free(void* ptr);
  // Declares that `stream` uses the block too, so that it is not reused
  // before the work queued on `stream` until the free has finished. No-op
  // for the block's own stream. Throws std::invalid_argument like free.
  void record_stream(void* ptr, Stream stream);

  // Completed events are processed first, so cached bytes are up to date.
  Stats stats();
  // Restarts max_allocated and max_reserved from the current values.
  void reset_peak();
  // Returns every wholly free segment to the device (after processing the
  // completed events; blocks whose events are pending stay).
  void empty_cache();
  // The rounded size held by a live block. Throws std::invalid_argument
  // like free.
  size_t block_size(void* ptr);

 private:
  using Block = detail::Block;

  detail::BlockPool& pool_of(const Block* block);
  Block* find_live_block(void* ptr, const char* caller) const;
  Block* take_cached_block(size_t rounded, Stream stream);
  Block* take_new_segment(size_t rounded, Stream stream);
  void* hand_out(Block* block, size_t rounded);
  void return_to_pool(Block* block);
  void process_completed_events();
  void release_cached_segments();
  void note_allocated(size_t bytes);
  void note_reserved(size_t bytes);
  [[noreturn]] void throw_out_of_memory(size_t requested);

  struct PendingEvent {
    AllocatorBackend::Event event;
    Block* block;
  };

  AllocatorBackend& backend_;
  const int device_index_;
  const char* const runtime_;
  std::mutex mutex_;
  // Guarded by mutex_. Blocks are owned here: each is reachable from its
  // segment's first block in segments_, and is also in exactly one of
  // live_blocks_ (allocated), a pool (reusable) or pending_events_.
  std::unordered_map<void*, Block*> live_blocks_;
  std::unordered_map<void*, Block*> segments_;  // segment base -> first block
  detail::BlockPool small_pool_;
  detail::BlockPool large_pool_;
  std::vector<PendingEvent> pending_events_;
  Stats stats_;
};

// Fills the fields of `out` that its struct_size covers (LOOM_STRUCT_HAS),
// for LoomDeviceTypeDesc.memory_stats.
void fill_memory_stats(const CachingAllocator::Stats& stats, LoomMemoryStats* out);

}  // namespace loom::gpu
