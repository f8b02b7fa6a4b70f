// See large_block_cache.hpp.
#include "large_block_cache.hpp"

#include <cstdlib>
#include <map>
#include <mutex>

namespace loom::cpu {
namespace {

size_t budget_bytes() {
  const char* v = std::getenv("LOOM_CPU_CACHE_MB");
  const long long mb = v ? std::atoll(v) : 1024;
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
  c.cached = 0;
}

}  // namespace loom::cpu
