// See caching_allocator.hpp; the policy is in docs/cuda_allocator.md.
#include "caching_allocator.hpp"

#include <loom/plugin/memory_stats.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "size_policy.hpp"

namespace loom::gpu {

using detail::Block;

CachingAllocator::CachingAllocator(AllocatorBackend& backend, int device_index, const char* runtime)
    : backend_(backend), device_index_(device_index), runtime_(runtime) {}

CachingAllocator::~CachingAllocator() {
  // A destructor must not throw; at process exit the driver may already be
  // shutting down and refuse these calls, and the memory goes with the
  // process anyway.
  try {
    if (!segments_.empty()) backend_.synchronize();
    for (const PendingEvent& pending : pending_events_) backend_.release_event(pending.event);
    for (auto& [base, first] : segments_) {
      for (Block* b = first; b != nullptr;) {
        Block* next = b->next;
        delete b;
        b = next;
      }
      backend_.raw_free(base);
    }
  } catch (...) {
  }
}

void* CachingAllocator::allocate(size_t bytes, Stream stream) {
  if (bytes == 0) return nullptr;
  std::lock_guard lock(mutex_);
  process_completed_events();
  if (bytes > detail::kMaxRequest) throw_out_of_memory(bytes);
  const size_t rounded = detail::rounded_block_size(bytes);

  Block* block = take_cached_block(rounded, stream);
  if (block == nullptr) block = take_new_segment(rounded, stream);
  if (block == nullptr) {
    // The device is full. Blocks whose events completed since the start of
    // this call may fit; failing that, cached segments of other sizes and
    // streams go back to the device so that one segment of this size fits.
    process_completed_events();
    block = take_cached_block(rounded, stream);
  }
  if (block == nullptr) {
    release_cached_segments();
    block = take_new_segment(rounded, stream);
  }
  if (block == nullptr) throw_out_of_memory(bytes);
  return hand_out(block, rounded);
}

void CachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard lock(mutex_);
  Block* block = find_live_block(ptr, "free");
  // Record every event before changing any state, so that a failing
  // backend leaves the block allocated rather than half freed.
  std::vector<PendingEvent> events;
  events.reserve(block->stream_uses.size());
  try {
    pending_events_.reserve(pending_events_.size() + block->stream_uses.size());
    for (void* used_on : block->stream_uses)
      events.push_back({backend_.record_event(used_on), block});
  } catch (...) {
    for (const PendingEvent& pending : events) backend_.release_event(pending.event);
    throw;
  }
  live_blocks_.erase(ptr);
  block->allocated = false;
  block->stream_uses.clear();
  stats_.allocated -= block->size;
  if (events.empty()) {
    return_to_pool(block);
    return;
  }
  block->pending_events = static_cast<int>(events.size());
  pending_events_.insert(pending_events_.end(), events.begin(), events.end());
}

void CachingAllocator::record_stream(void* ptr, Stream stream) {
  std::lock_guard lock(mutex_);
  Block* block = find_live_block(ptr, "record_stream");
  if (stream == block->stream) return;
  auto& uses = block->stream_uses;
  if (std::find(uses.begin(), uses.end(), stream) == uses.end()) uses.push_back(stream);
}

CachingAllocator::Stats CachingAllocator::stats() {
  std::lock_guard lock(mutex_);
  process_completed_events();
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard lock(mutex_);
  stats_.max_allocated = stats_.allocated;
  stats_.max_reserved = stats_.reserved;
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(mutex_);
  process_completed_events();
  release_cached_segments();
}

size_t CachingAllocator::block_size(void* ptr) {
  std::lock_guard lock(mutex_);
  return find_live_block(ptr, "block_size")->size;
}

// --- private; every function below runs under mutex_ ------------------------

detail::BlockPool& CachingAllocator::pool_of(const Block* block) {
  return block->in_small_pool ? small_pool_ : large_pool_;
}

Block* CachingAllocator::find_live_block(void* ptr, const char* caller) const {
  auto it = live_blocks_.find(ptr);
  if (it != live_blocks_.end()) return it->second;
  char address[32];
  std::snprintf(address, sizeof address, "%p", ptr);
  throw std::invalid_argument(
      std::string(runtime_) + " caching allocator (device " + std::to_string(device_index_) +
      "): " + caller + " of pointer " + address +
      ", which is not a live block of this allocator (never allocated here, or already "
      "freed)");
}

// The best-fitting reusable block of the right pool and stream, removed
// from its pool; nullptr when none fits.
Block* CachingAllocator::take_cached_block(size_t rounded, Stream stream) {
  detail::BlockPool& pool = detail::is_small_block(rounded) ? small_pool_ : large_pool_;
  Block* block = pool.best_fit(stream, rounded);
  if (block == nullptr) return nullptr;
  pool.erase(block);
  ++stats_.num_cache_hits;
  return block;
}

// A fresh segment for a block of `rounded` bytes, as one block not in any
// pool; nullptr when the device is out of memory.
Block* CachingAllocator::take_new_segment(size_t rounded, Stream stream) {
  const size_t segment_size = detail::segment_size_for(rounded);
  auto block = std::make_unique<Block>();
  void* base = backend_.raw_alloc(segment_size);
  if (base == nullptr) return nullptr;
  block->ptr = static_cast<char*>(base);
  block->size = segment_size;
  block->stream = stream;
  block->in_small_pool = detail::is_small_block(rounded);
  try {
    segments_.emplace(base, block.get());
  } catch (...) {  // host out of memory: do not leak the device segment
    backend_.raw_free(base);
    throw;
  }
  ++stats_.num_device_allocs;
  note_reserved(segment_size);
  return block.release();
}

// Splits off what `rounded` does not need when it is worth keeping, and
// marks the block live. `block` is reusable and in no pool.
void* CachingAllocator::hand_out(Block* block, size_t rounded) {
  if (detail::should_split(block->size, rounded)) {
    Block* rest = new Block;
    rest->ptr = block->ptr + rounded;
    rest->size = block->size - rounded;
    rest->stream = block->stream;
    rest->in_small_pool = block->in_small_pool;
    rest->prev = block;
    rest->next = block->next;
    if (block->next != nullptr) block->next->prev = rest;
    block->next = rest;
    block->size = rounded;
    pool_of(rest).insert(rest);
  }
  block->allocated = true;
  live_blocks_.emplace(block->ptr, block);
  ++stats_.num_allocs;
  note_allocated(block->size);
  return block->ptr;
}

// Puts a block that just became reusable into its pool, merged with its
// reusable neighbours. Merging keeps the lower block, so a segment's first
// block survives every merge.
void CachingAllocator::return_to_pool(Block* block) {
  detail::BlockPool& pool = pool_of(block);
  if (Block* prev = block->prev; prev != nullptr && prev->reusable()) {
    pool.erase(prev);  // before its size (part of the pool's order) changes
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && next->reusable()) {
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    delete next;
  }
  pool.insert(block);
}

// Non-blocking: blocks whose last pending event has completed go back to
// their pools.
void CachingAllocator::process_completed_events() {
  // Compacts in place: this runs at the start of every allocate.
  size_t kept = 0;
  for (const PendingEvent& pending : pending_events_) {
    if (!backend_.event_done(pending.event)) {
      pending_events_[kept++] = pending;
      continue;
    }
    backend_.release_event(pending.event);
    if (--pending.block->pending_events == 0) return_to_pool(pending.block);
  }
  pending_events_.resize(kept);
}

// Returns every wholly free segment of both pools to the device.
void CachingAllocator::release_cached_segments() {
  std::vector<Block*> segments = small_pool_.whole_segments();
  std::vector<Block*> large = large_pool_.whole_segments();
  segments.insert(segments.end(), large.begin(), large.end());
  // No synchronize: raw_free waits for the work queued on the segment
  // (AllocatorBackend), and blocks other streams may use are still pending.
  for (Block* segment : segments) {
    pool_of(segment).erase(segment);
    segments_.erase(segment->ptr);
    stats_.reserved -= segment->size;
    backend_.raw_free(segment->ptr);
    delete segment;
  }
}

void CachingAllocator::note_allocated(size_t bytes) {
  stats_.allocated += bytes;
  stats_.max_allocated = std::max(stats_.max_allocated, stats_.allocated);
}

void CachingAllocator::note_reserved(size_t bytes) {
  stats_.reserved += bytes;
  stats_.max_reserved = std::max(stats_.max_reserved, stats_.reserved);
}

void CachingAllocator::throw_out_of_memory(size_t requested) {
  ++stats_.num_ooms;
  size_t device_free = 0;
  size_t device_total = 0;
  backend_.mem_info(&device_free, &device_total);
  throw OutOfMemory(device_index_, requested, device_free, device_total, stats_.reserved,
                    stats_.allocated, runtime_);
}

void fill_memory_stats(const CachingAllocator::Stats& stats, LoomMemoryStats* out) {
  LoomMemoryStats s{};
  s.allocated_bytes = stats.allocated;
  s.max_allocated_bytes = stats.max_allocated;
  s.reserved_bytes = stats.reserved;
  s.max_reserved_bytes = stats.max_reserved;
  s.num_allocs = stats.num_allocs;
  s.num_cache_hits = stats.num_cache_hits;
  s.num_device_allocs = stats.num_device_allocs;
  s.num_ooms = stats.num_ooms;
  plugin::write_memory_stats(s, out);
}

}  // namespace loom::gpu
