// The caching allocator's size classes, splitting, merging, best fit,
// statistics and misuse, against a fake device (no GPU needed).
#include <catch2/catch.hpp>

#include <cstring>
#include <stdexcept>
#include <string>

#include "caching_allocator.hpp"
#include "fake_allocator_backend.hpp"

namespace loom::gpu::test {

namespace {

char* as_bytes(void* p) { return static_cast<char*>(p); }

}  // namespace

TEST_CASE("requests round up to 512 bytes", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  void* a = alloc.allocate(1, nullptr);
  void* b = alloc.allocate(512, nullptr);
  void* c = alloc.allocate(513, nullptr);
  void* d = alloc.allocate(1 * MiB, nullptr);
  void* e = alloc.allocate(1 * MiB + 1, nullptr);
  CHECK(alloc.block_size(a) == 512);
  CHECK(alloc.block_size(b) == 512);
  CHECK(alloc.block_size(c) == 1024);
  CHECK(alloc.block_size(d) == 1 * MiB);
  CHECK(alloc.block_size(e) == 1 * MiB + 512);
  // Consecutive small blocks are carved from one segment, in address order.
  CHECK(as_bytes(b) == as_bytes(a) + 512);
  CHECK(as_bytes(c) == as_bytes(b) + 512);
  for (void* p : {a, b, c, d, e}) alloc.free(p);
}

TEST_CASE("segment sizes follow the request's size class", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  struct Case {
    size_t request;
    size_t segment;
  };
  // One fresh allocator per request, so each takes a new segment. The
  // classes apply to the rounded size: 10 MiB - 511 rounds to 10 MiB.
  for (Case c : {Case{512, 2 * MiB}, Case{1 * MiB, 2 * MiB}, Case{1 * MiB + 1, 20 * MiB},
                 Case{10 * MiB - 512, 20 * MiB}, Case{10 * MiB - 511, 10 * MiB},
                 Case{10 * MiB, 10 * MiB},
                 Case{11 * MiB + 1, 12 * MiB}, Case{25 * MiB, 26 * MiB}}) {
    CAPTURE(c.request);
    CachingAllocator fresh(device, 0);
    void* p = fresh.allocate(c.request, nullptr);
    CHECK(device.last_alloc_size() == c.segment);
    fresh.free(p);
  }
}

TEST_CASE("small and large requests never share a pool", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  // A whole free 2 MiB small segment does not serve a 1.5 MiB (large) request.
  alloc.free(alloc.allocate(512, nullptr));
  void* large = alloc.allocate(1536 * KiB, nullptr);
  CHECK(device.alloc_sizes() == std::vector<size_t>{2 * MiB, 20 * MiB});
  // Nor does the large segment's free rest serve a small request.
  void* small = alloc.allocate(4 * KiB, nullptr);
  CHECK(device.alloc_sizes().size() == 2);  // the cached small segment
  void* small2 = alloc.allocate(1 * MiB, nullptr);
  CHECK(device.alloc_sizes().size() == 2);  // still room in the small segment
  void* small3 = alloc.allocate(1 * MiB, nullptr);
  CHECK(device.alloc_sizes() == std::vector<size_t>{2 * MiB, 20 * MiB, 2 * MiB});
  for (void* p : {large, small, small2, small3}) alloc.free(p);
}

TEST_CASE("a block splits only when the rest is worth keeping", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);

  SECTION("small pool: a 512-byte rest is kept") {
    void* a = alloc.allocate(1 * MiB, nullptr);
    void* b = alloc.allocate(1 * MiB - 512, nullptr);
    void* c = alloc.allocate(512, nullptr);  // exactly the last 512 bytes
    CHECK(as_bytes(b) == as_bytes(a) + 1 * MiB);
    CHECK(as_bytes(c) == as_bytes(a) + 2 * MiB - 512);
    CHECK(alloc.stats().num_device_allocs == 1);
    for (void* p : {a, b, c}) alloc.free(p);
  }
  SECTION("large pool: a rest of exactly 1 MiB stays in the block") {
    void* p = alloc.allocate(19 * MiB, nullptr);  // a 20 MiB segment
    CHECK(device.last_alloc_size() == 20 * MiB);
    CHECK(alloc.block_size(p) == 20 * MiB);
    CHECK(alloc.stats().allocated == 20 * MiB);
    alloc.free(p);
  }
  SECTION("large pool: a rest over 1 MiB becomes a block of its own") {
    void* p = alloc.allocate(18 * MiB + 512, nullptr);
    CHECK(alloc.block_size(p) == 18 * MiB + 512);
    void* rest = alloc.allocate(2 * MiB - 512, nullptr);  // served by the rest
    CHECK(as_bytes(rest) == as_bytes(p) + 18 * MiB + 512);
    CHECK(alloc.stats().num_device_allocs == 1);
    alloc.free(p);
    alloc.free(rest);
  }
}

TEST_CASE("a freed block merges with both free neighbours", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  void* a = alloc.allocate(4 * KiB, nullptr);
  void* b = alloc.allocate(4 * KiB, nullptr);
  void* c = alloc.allocate(4 * KiB, nullptr);
  alloc.free(a);
  alloc.free(c);  // merges with the segment's free tail
  alloc.empty_cache();
  CHECK(device.live_segments() == 1);  // b still splits the segment
  alloc.free(b);  // joins a (before) and c + tail (after)
  // One block covers the segment again: a 1 MiB request starts at its base,
  // and empty_cache can return it.
  void* whole = alloc.allocate(1 * MiB, nullptr);
  CHECK(whole == a);
  CHECK(alloc.stats().num_device_allocs == 1);
  alloc.free(whole);
  alloc.empty_cache();
  CHECK(device.live_segments() == 0);
  CHECK(device.bad_calls() == 0);
}

TEST_CASE("the best-fitting free block is chosen, lowest address on ties",
          "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  // Free holes of 8 KiB, 4 KiB, 4 KiB and the large tail, kept apart by
  // live 512-byte separators.
  void* hole8 = alloc.allocate(8 * KiB, nullptr);
  void* sep1 = alloc.allocate(512, nullptr);
  void* hole4a = alloc.allocate(4 * KiB, nullptr);
  void* sep2 = alloc.allocate(512, nullptr);
  void* hole4b = alloc.allocate(4 * KiB, nullptr);
  void* sep3 = alloc.allocate(512, nullptr);
  alloc.free(hole4b);
  alloc.free(hole8);
  alloc.free(hole4a);

  void* p = alloc.allocate(3 * KiB, nullptr);  // fits all; the 4 KiB holes fit best
  CHECK(p == hole4a);
  void* q = alloc.allocate(4 * KiB, nullptr);
  CHECK(q == hole4b);
  void* r = alloc.allocate(5 * KiB, nullptr);  // only the 8 KiB hole or the tail
  CHECK(r == hole8);
  CHECK(alloc.stats().num_device_allocs == 1);
  for (void* x : {p, q, r, sep1, sep2, sep3}) alloc.free(x);
}

TEST_CASE("a freed block is reused by its own stream only", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  const auto s1 = fake_stream(1);
  const auto s2 = fake_stream(2);
  void* p = alloc.allocate(30 * MiB, s1);
  alloc.free(p);
  void* again = alloc.allocate(30 * MiB, s1);
  CHECK(again == p);
  CHECK(alloc.stats().num_cache_hits == 1);
  CHECK(alloc.stats().num_device_allocs == 1);
  alloc.free(again);
  // Another stream's work may not be ordered after s1's: it gets new memory.
  void* other = alloc.allocate(30 * MiB, s2);
  CHECK(other != p);
  CHECK(alloc.stats().num_device_allocs == 2);
  alloc.free(other);
  // Both 30 MiB blocks are cached now; the default stream gets neither.
  void* on_default = alloc.allocate(30 * MiB, nullptr);
  CHECK(on_default != p);
  CHECK(on_default != other);
  CHECK(alloc.stats().num_device_allocs == 3);
  alloc.free(on_default);
}

TEST_CASE("0-byte allocations return nullptr without touching the device",
          "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  CHECK(alloc.allocate(0, nullptr) == nullptr);
  CHECK(alloc.allocate(0, fake_stream(3)) == nullptr);
  alloc.free(nullptr);  // what a 0-byte allocation returns: accepted
  CHECK(device.alloc_calls() == 0);
  CHECK(alloc.stats().num_allocs == 0);
  CHECK(alloc.stats().reserved == 0);
}

TEST_CASE("unknown and already freed pointers are refused by name", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 2);
  int on_the_stack = 0;
  try {
    alloc.free(&on_the_stack);
    FAIL("free of a foreign pointer did not throw");
  } catch (const std::invalid_argument& e) {
    const std::string text = e.what();
    char address[32];
    std::snprintf(address, sizeof address, "%p", static_cast<void*>(&on_the_stack));
    CHECK(text.find(address) != std::string::npos);
    CHECK(text.find("device 2") != std::string::npos);
    CHECK(text.find("free") != std::string::npos);
  }
  void* p = alloc.allocate(100, nullptr);
  void* inside = as_bytes(p) + 8;  // not a block start
  CHECK_THROWS_AS(alloc.free(inside), std::invalid_argument);
  CHECK_THROWS_AS(alloc.block_size(inside), std::invalid_argument);
  CHECK_THROWS_AS(alloc.record_stream(inside, fake_stream(1)), std::invalid_argument);
  alloc.free(p);
  CHECK_THROWS_WITH(alloc.free(p), Catch::Contains("already freed"));
  CHECK(alloc.stats().allocated == 0);  // the refused calls changed nothing
}

TEST_CASE("statistics follow a sequence of calls", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  void* a = alloc.allocate(1000, nullptr);       // 1024 B from a new 2 MiB segment
  void* b = alloc.allocate(3 * MiB, nullptr);    // 3 MiB from a new 20 MiB segment
  void* c = alloc.allocate(2000, nullptr);       // 2048 B, cached
  auto s = alloc.stats();
  CHECK(s.allocated == 1024 + 3 * MiB + 2048);
  CHECK(s.reserved == 22 * MiB);
  CHECK(s.num_allocs == 3);
  CHECK(s.num_cache_hits == 1);
  CHECK(s.num_device_allocs == 2);

  alloc.free(b);
  s = alloc.stats();
  CHECK(s.allocated == 1024 + 2048);
  CHECK(s.max_allocated == 1024 + 3 * MiB + 2048);
  CHECK(s.reserved == 22 * MiB);  // cached, not returned
  alloc.empty_cache();
  s = alloc.stats();
  CHECK(s.reserved == 2 * MiB);
  CHECK(s.max_reserved == 22 * MiB);

  alloc.reset_peak();
  s = alloc.stats();
  CHECK(s.max_allocated == 1024 + 2048);
  CHECK(s.max_reserved == 2 * MiB);
  void* d = alloc.allocate(512, nullptr);
  alloc.free(d);
  s = alloc.stats();
  CHECK(s.max_allocated == 1024 + 2048 + 512);
  CHECK(s.num_allocs == 4);
  CHECK(s.num_ooms == 0);
  alloc.free(a);
  alloc.free(c);
  CHECK(alloc.stats().allocated == 0);
}

TEST_CASE("LoomMemoryStats gets the fields its struct_size covers", "[cuda][allocator]") {
  CachingAllocator::Stats stats;
  stats.allocated = 1;
  stats.max_allocated = 2;
  stats.reserved = 3;
  stats.max_reserved = 4;
  stats.num_allocs = 5;
  stats.num_cache_hits = 6;
  stats.num_device_allocs = 7;
  stats.num_ooms = 8;

  LoomMemoryStats full;
  std::memset(&full, 0xff, sizeof full);
  full.struct_size = sizeof full;
  loom::gpu::fill_memory_stats(stats, &full);
  CHECK(full.allocated_bytes == 1);
  CHECK(full.max_allocated_bytes == 2);
  CHECK(full.reserved_bytes == 3);
  CHECK(full.max_reserved_bytes == 4);
  CHECK(full.num_allocs == 5);
  CHECK(full.num_cache_hits == 6);
  CHECK(full.num_device_allocs == 7);
  CHECK(full.num_ooms == 8);

  // A host that knows only the first two fields: the rest stays untouched.
  LoomMemoryStats older;
  std::memset(&older, 0xab, sizeof older);
  older.struct_size = offsetof(LoomMemoryStats, reserved_bytes);
  loom::gpu::fill_memory_stats(stats, &older);
  CHECK(older.allocated_bytes == 1);
  CHECK(older.max_allocated_bytes == 2);
  CHECK(older.reserved_bytes == 0xababababababababull);
  CHECK(older.num_ooms == 0xababababababababull);
}

TEST_CASE("the destructor returns every segment, in use or not", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  {
    CachingAllocator alloc(device, 0);
    alloc.allocate(100, nullptr);                 // live
    alloc.free(alloc.allocate(40 * MiB, nullptr));  // cached
    void* pending = alloc.allocate(2 * MiB, fake_stream(1));
    alloc.record_stream(pending, fake_stream(2));
    alloc.free(pending);  // waits for an event
    CHECK(device.live_segments() == 3);
  }
  CHECK(device.live_segments() == 0);
  CHECK(device.outstanding_events() == 0);
  CHECK(device.bad_calls() == 0);
}

}  // namespace loom::gpu::test
