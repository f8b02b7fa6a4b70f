// See large_block_cache.hpp.
#include "large_block_cache.hpp"

#include "host_memory_stats.hpp"

#include <cstdlib>
#include <map>
#include <mutex>

#include <unistd.h>

namespace loom::cpu {
namespace {

// An eighth of physical memory, at least 1 GiB. A fixed 1 GiB thrashed as
// soon as one backward freed more than that at once (GELU's 8 ops over 16M
// floats: every step gave most blocks back to the system and faulted them in
// again, 7x slower); what is cached is memory the process has just used.
size_t default_budget_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const size_t eighth = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) / 8 : 0;
  const size_t floor = size_t{1} << 30;
  return eighth > floor ? eighth : floor;
}

size_t budget_bytes() {
  const char* v = std::getenv("LOOM_CPU_CACHE_MB");
  if (!v) return default_budget_bytes();
  const long long mb = std::atoll(v);
  return mb > 0 ? static_cast<size_t>(mb) << 20 : 0;
}

struct Cache {
  std::mutex mutex;
  std::multimap<size_t, void*> blocks;  // capacity -> raw block
  size_t cached = 0;
  const size_t budget = budget_bytes();
};

// Never destroyed: blocks may be freed by other statics' destructors at exit.
Cache& cache() {
  static auto* c = new Cache;
  return *c;
}

}  // namespace

void* large_block_take(size_t capacity, size_t* got) noexcept {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  auto it = c.blocks.lower_bound(capacity);
  if (it == c.blocks.end() || it->first > capacity + capacity / 8) return nullptr;
  void* raw = it->second;
  *got = it->first;
  c.cached -= it->first;
  c.blocks.erase(it);
  return raw;
}

bool large_block_give(void* raw, size_t capacity) noexcept {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  if (c.cached + capacity > c.budget) return false;
  try {
    c.blocks.emplace(capacity, raw);
  } catch (...) {
    return false;  // no memory for the map node: let the caller free it
  }
  c.cached += capacity;
  return true;
}

void large_block_release_all() noexcept {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  for (auto& [cap, raw] : c.blocks) std::free(raw);
  c.blocks.clear();
  stats_reserved_shrank(c.cached);
  c.cached = 0;
}

}  // namespace loom::cpu
