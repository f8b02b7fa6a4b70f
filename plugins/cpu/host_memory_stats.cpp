// See host_memory_stats.hpp.
#include "host_memory_stats.hpp"

#include <loom/plugin/memory_stats.hpp>

#include <atomic>
#include <cstdint>

namespace loom::cpu {
namespace {

struct Counters {
  std::atomic<uint64_t> allocated{0}, max_allocated{0};
  std::atomic<uint64_t> reserved{0}, max_reserved{0};
  std::atomic<uint64_t> allocs{0}, cache_hits{0}, system_allocs{0}, ooms{0};
};

Counters& counters() {
  static Counters c;  // trivially destructible members: usable during exit
  return c;
}

void raise_max(std::atomic<uint64_t>& max, uint64_t now) {
  uint64_t seen = max.load(std::memory_order_relaxed);
  while (now > seen && !max.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}

}  // namespace

void stats_handed_out(size_t bytes, bool from_cache) noexcept {
  Counters& c = counters();
  raise_max(c.max_allocated, c.allocated.fetch_add(bytes, std::memory_order_relaxed) + bytes);
  c.allocs.fetch_add(1, std::memory_order_relaxed);
  (from_cache ? c.cache_hits : c.system_allocs).fetch_add(1, std::memory_order_relaxed);
}

void stats_returned(size_t bytes) noexcept { counters().allocated.fetch_sub(bytes, std::memory_order_relaxed); }

void stats_reserved_grew(size_t bytes) noexcept {
  Counters& c = counters();
  raise_max(c.max_reserved, c.reserved.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}

void stats_reserved_shrank(size_t bytes) noexcept {
  counters().reserved.fetch_sub(bytes, std::memory_order_relaxed);
}

void stats_oom() noexcept { counters().ooms.fetch_add(1, std::memory_order_relaxed); }

void fill_memory_stats(LoomMemoryStats* out) noexcept {
  const Counters& c = counters();
  LoomMemoryStats s{};
  s.allocated_bytes = c.allocated.load(std::memory_order_relaxed);
  s.max_allocated_bytes = c.max_allocated.load(std::memory_order_relaxed);
  s.reserved_bytes = c.reserved.load(std::memory_order_relaxed);
  s.max_reserved_bytes = c.max_reserved.load(std::memory_order_relaxed);
  s.num_allocs = c.allocs.load(std::memory_order_relaxed);
  s.num_cache_hits = c.cache_hits.load(std::memory_order_relaxed);
  s.num_device_allocs = c.system_allocs.load(std::memory_order_relaxed);
  s.num_ooms = c.ooms.load(std::memory_order_relaxed);
  plugin::write_memory_stats(s, out);
}

void reset_peak_memory_stats() noexcept {
  Counters& c = counters();
  c.max_allocated.store(c.allocated.load(std::memory_order_relaxed), std::memory_order_relaxed);
  c.max_reserved.store(c.reserved.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

}  // namespace loom::cpu
