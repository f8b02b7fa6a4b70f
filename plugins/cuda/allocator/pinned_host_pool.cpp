// pinned_host_pool.cpp — see pinned_host_pool.hpp.
#include "pinned_host_pool.hpp"

#include "out_of_memory.hpp"

#include <bit>
#include <string>

namespace loom::gpu {

size_t PinnedHostPool::block_size(size_t bytes) {
  constexpr size_t kMin = 512;
  if (bytes <= kMin) return kMin;
  if (bytes > (size_t{1} << 62)) return 0;  // no such block: allocate fails
  return std::bit_ceil(bytes);
}

PinnedHostPool::~PinnedHostPool() {
  for (auto& [addr, b] : blocks_) {
    for (void* e : b.events) backend_.release_event(e);
    backend_.raw_free(reinterpret_cast<void*>(addr));
  }
}

bool PinnedHostPool::settle(Block& b) {
  std::erase_if(b.events, [&](void* e) {
    if (!backend_.event_done(e)) return false;
    backend_.release_event(e);
    return true;
  });
  return b.events.empty();
}

void* PinnedHostPool::allocate(size_t bytes) {
  const size_t size = block_size(bytes);
  std::lock_guard lock(mu_);
  if (size) {
    // A cached block of this class whose copies are done.
    auto [first, last] = free_by_size_.equal_range(size);
    for (auto it = first; it != last; ++it) {
      Block& b = blocks_.at(it->second);
      if (!settle(b)) continue;
      const uintptr_t addr = it->second;
      free_by_size_.erase(it);
      b.in_use = true;
      stats_.allocated_bytes += size;
      ++stats_.num_cache_hits;
      return reinterpret_cast<void*>(addr);
    }
  }
  void* p = size ? backend_.raw_alloc(size) : nullptr;
  if (!p && size) {
    release_cached();
    p = backend_.raw_alloc(size);
  }
  if (!p)
    throw PinnedOutOfMemory(std::string(device_type_) + ": out of pinned host memory: tried to allocate " +
                            format_bytes(bytes) +
                            "; loom holds " + format_bytes(stats_.reserved_bytes) + " of pinned memory, " +
                            format_bytes(stats_.allocated_bytes) + " of it in tensors");
  blocks_.emplace(reinterpret_cast<uintptr_t>(p), Block{size, true, {}});
  stats_.allocated_bytes += size;
  stats_.reserved_bytes += size;
  ++stats_.num_host_allocs;
  return p;
}

void PinnedHostPool::free(void* ptr) {
  std::lock_guard lock(mu_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks_.end() || !it->second.in_use) return;
  it->second.in_use = false;
  stats_.allocated_bytes -= it->second.size;
  free_by_size_.emplace(it->second.size, it->first);
}

PinnedHostPool::BlockMap::iterator PinnedHostPool::find_block(const void* ptr) {
  const auto addr = reinterpret_cast<uintptr_t>(ptr);
  auto it = blocks_.upper_bound(addr);
  if (it == blocks_.begin()) return blocks_.end();
  --it;
  return addr < it->first + it->second.size && it->second.in_use ? it : blocks_.end();
}

PinnedHostPool::BlockMap::const_iterator PinnedHostPool::find_block(const void* ptr) const {
  return const_cast<PinnedHostPool*>(this)->find_block(ptr);
}

bool PinnedHostPool::record_use(const void* ptr, int device, void* stream) {
  std::lock_guard lock(mu_);
  auto it = find_block(ptr);
  if (it == blocks_.end()) return false;
  it->second.events.push_back(backend_.record_event(device, stream));
  return true;
}

bool PinnedHostPool::contains(const void* ptr) const {
  std::lock_guard lock(mu_);
  return find_block(ptr) != blocks_.end();
}

void PinnedHostPool::release_cached() {
  for (auto it = free_by_size_.begin(); it != free_by_size_.end();) {
    Block& b = blocks_.at(it->second);
    if (!settle(b)) {
      ++it;
      continue;
    }
    backend_.raw_free(reinterpret_cast<void*>(it->second));
    stats_.reserved_bytes -= b.size;
    blocks_.erase(it->second);
    it = free_by_size_.erase(it);
  }
}

void PinnedHostPool::empty_cache() {
  std::lock_guard lock(mu_);
  release_cached();
}

PinnedHostStats PinnedHostPool::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace loom::gpu
