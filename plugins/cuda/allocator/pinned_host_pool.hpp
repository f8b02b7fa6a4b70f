// pinned_host_pool.hpp — page-locked host memory for asynchronous copies
// (the ABI 1.3 host_allocate slots), in the spirit of PyTorch's
// CachingHostAllocator.
//
// Pinning memory is expensive (cudaHostAlloc maps and locks pages: far
// slower than malloc), so freed blocks are cached by size class (powers of
// two) and handed out again. A block may be freed while a copy queued on a
// stream still reads or writes it (a non-blocking copy): every copy that
// uses a block records an event on its stream (record_use), and a freed
// block is reused only once all of its events are done.
//
// Plain C++ over PinnedHostBackend, so the policy is tested host-side with a
// fake backend; the plugin's backend is cudaHostAlloc / cudaFreeHost /
// cudaEvent*. Thread-safe: one mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace loom::gpu {

class PinnedHostBackend {
 public:
  using Stream = void*;
  using Event = void*;
  virtual ~PinnedHostBackend() = default;
  // `bytes` (> 0) of page-locked memory, or nullptr when the system refuses.
  virtual void* raw_alloc(size_t bytes) = 0;
  virtual void raw_free(void* ptr) = 0;
  // An event recorded now on `stream` of device `device`; handed back once
  // through release_event.
  virtual Event record_event(int device, Stream stream) = 0;
  virtual bool event_done(Event event) = 0;  // non-blocking
  virtual void release_event(Event event) = 0;
};

// Thrown when the system gives no more pinned memory, even after the cache
// was released; the message states the request and what the pool holds.
class PinnedOutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PinnedHostStats {
  size_t allocated_bytes = 0;  // in blocks handed out (rounded sizes)
  size_t reserved_bytes = 0;   // handed out plus cached
  uint64_t num_host_allocs = 0;  // raw_alloc calls that succeeded
  uint64_t num_cache_hits = 0;
};

class PinnedHostPool {
 public:
  // `device_type` ("cuda", "hip": a static string) starts its messages.
  explicit PinnedHostPool(PinnedHostBackend& backend, const char* device_type = "cuda")
      : backend_(backend), device_type_(device_type) {}
  ~PinnedHostPool();  // gives every block back (waits for nothing: exit only)
  PinnedHostPool(const PinnedHostPool&) = delete;
  PinnedHostPool& operator=(const PinnedHostPool&) = delete;

  // At least `bytes` (> 0) of pinned memory. Throws PinnedOutOfMemory.
  void* allocate(size_t bytes);
  // Takes back a block from allocate (its base pointer); reused only after
  // the copies recorded on it are done. A pointer not from this pool is
  // ignored.
  void free(void* ptr);
  // When `ptr` lies inside a block handed out by this pool: records that a
  // copy just queued on (`device`, `stream`) uses it, and returns true.
  // Otherwise (pageable memory) returns false.
  bool record_use(const void* ptr, int device, void* stream);
  // Whether `ptr` lies inside a block handed out by this pool.
  bool contains(const void* ptr) const;
  // Gives cached blocks whose copies are done back to the system.
  void empty_cache();
  PinnedHostStats stats() const;

  // The block size that serves `bytes`: the next power of two, at least 512.
  static size_t block_size(size_t bytes);

 private:
  struct Block {
    size_t size;
    bool in_use;
    std::vector<void*> events;  // copies that may still touch the block
  };
  using BlockMap = std::map<uintptr_t, Block>;

  // Releases the events of `b` that are done; true when none is left.
  bool settle(Block& b);
  BlockMap::iterator find_block(const void* ptr);
  BlockMap::const_iterator find_block(const void* ptr) const;
  void release_cached();  // with mu_ held

  PinnedHostBackend& backend_;
  const char* const device_type_;
  mutable std::mutex mu_;
  BlockMap blocks_;                              // every block, by base address
  std::multimap<size_t, uintptr_t> free_by_size_;  // cached blocks
  PinnedHostStats stats_;
};

}  // namespace loom::gpu
