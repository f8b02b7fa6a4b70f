// See host_allocator.hpp. Layout of every block:
//   [64-byte header: size class][payload, 64-byte aligned]
// Small payloads (64 B .. 4 KiB, powers of two) are "classed" and go back to
// a bounded per-thread free list when released; larger ones are unclassed
// and go straight back to the system. A thread's cached blocks are released
// when it exits, and at most kDepth per class are kept, so the cache holds
// well under 128 KiB per thread.
#include "host_allocator.hpp"

#include "host_memory_stats.hpp"
#include "large_block_cache.hpp"

#include <cstdint>
#include <cstdlib>

namespace loom::cpu {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kHeader = 64;  // keeps the payload aligned
constexpr int kClasses = 7;     // payloads of 64 << c bytes, c < kClasses
constexpr int kDepth = 16;      // cached blocks per class and thread
constexpr uint32_t kUnclassed = 0xffffffffu;

struct Header {
  uint32_t size_class;
  size_t payload;  // bytes after the header, for unclassed blocks
};

// Smallest class whose payload holds nbytes, or kUnclassed.
uint32_t class_of(size_t nbytes) {
  size_t cap = kAlign;
  for (uint32_t c = 0; c < kClasses; ++c, cap <<= 1)
    if (nbytes <= cap) return c;
  return kUnclassed;
}

// Trivially destructible, so it stays usable while the thread tears down:
// a block freed after the drain below (a tensor released by another
// thread_local's destructor, or a global at exit) goes to the system.
struct ThreadCache {
  void* blocks[kClasses][kDepth];
  int count[kClasses];
  bool dead;
};

ThreadCache& cache() {
  thread_local ThreadCache tc{};
  return tc;
}

// Releases the cached blocks at thread exit and marks the cache dead.
struct Drain {
  ~Drain() {
    ThreadCache& tc = cache();
    for (int c = 0; c < kClasses; ++c) {
      for (int i = 0; i < tc.count[c]; ++i) std::free(tc.blocks[c][i]);
      tc.count[c] = 0;
    }
    tc.dead = true;
  }
};

// Registers the drain the first time a thread caches a block.
void arm_drain() { thread_local Drain d; (void)d; }

void* system_block(size_t payload, uint32_t size_class) {
  void* raw = nullptr;
  size_t got = payload;
  const bool large = payload >= kLargeBlock;
  if (large) raw = large_block_take(kHeader + payload, &got);
  if (raw) {
    got -= kHeader;
    stats_handed_out(got, /*from_cache=*/true);
  } else {
    raw = std::aligned_alloc(kAlign, kHeader + payload);  // both multiples of 64
    if (raw == nullptr && large) {
      // Cached blocks no tensor uses may be what the system lacks.
      large_block_release_all();
      raw = std::aligned_alloc(kAlign, kHeader + payload);
    }
    if (raw == nullptr) return nullptr;
    if (large) {
      stats_reserved_grew(kHeader + payload);
      stats_handed_out(payload, /*from_cache=*/false);
    }
  }
  auto* h = static_cast<Header*>(raw);
  h->size_class = size_class;
  h->payload = got;
  return static_cast<char*>(raw) + kHeader;
}

}  // namespace

void* host_allocate(size_t nbytes) noexcept {
  const uint32_t c = class_of(nbytes);
  if (c != kUnclassed) {
    ThreadCache& tc = cache();
    if (tc.count[c] > 0) return static_cast<char*>(tc.blocks[c][--tc.count[c]]) + kHeader;
    return system_block(kAlign << c, c);
  }
  // Round up to the alignment; a size that would wrap is refused.
  if (nbytes > SIZE_MAX - kHeader - kAlign) return nullptr;
  return system_block((nbytes + kAlign - 1) & ~(kAlign - 1), kUnclassed);
}

void host_free(void* ptr) noexcept {
  if (ptr == nullptr) return;
  void* raw = static_cast<char*>(ptr) - kHeader;
  const uint32_t c = static_cast<Header*>(raw)->size_class;
  if (c < kClasses) {
    ThreadCache& tc = cache();
    if (!tc.dead && tc.count[c] < kDepth) {
      if (tc.count[c] == 0) arm_drain();
      tc.blocks[c][tc.count[c]++] = raw;
      return;
    }
  }
  const size_t payload = static_cast<Header*>(raw)->payload;
  if (c == kUnclassed && payload >= kLargeBlock) {
    stats_returned(payload);
    if (large_block_give(raw, kHeader + payload)) return;
    stats_reserved_shrank(kHeader + payload);
  }
  std::free(raw);
}

}  // namespace loom::cpu
