// Stream-safe reuse (record_stream + events), empty_cache and out of memory.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "caching_allocator.hpp"
#include "fake_allocator_backend.hpp"

namespace loom::gpu::test {

TEST_CASE("a block used on other streams waits for their events", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  const auto s1 = fake_stream(1);
  const auto s2 = fake_stream(2);
  const auto s3 = fake_stream(3);
  void* p = alloc.allocate(64 * KiB, s1);
  alloc.record_stream(p, s2);
  alloc.record_stream(p, s3);
  alloc.record_stream(p, s2);  // recorded once per stream
  alloc.free(p);
  CHECK(device.events_recorded() == 2);
  CHECK(alloc.stats().allocated == 0);  // freed for the statistics at once

  void* q = alloc.allocate(64 * KiB, s1);
  CHECK(q != p);  // s2 and s3 may still be using p
  alloc.free(q);
  device.complete_events_on(s2);
  void* r = alloc.allocate(64 * KiB, s1);
  CHECK(r != p);  // s3 may still be using it
  alloc.free(r);
  device.complete_events_on(s3);
  void* t = alloc.allocate(64 * KiB, s1);
  CHECK(t == p);  // best fit: p (merged back with q and the tail) at the lowest address
  alloc.free(t);
  CHECK(device.outstanding_events() == 0);
  CHECK(device.bad_calls() == 0);
}

TEST_CASE("record_stream on the block's own stream needs no event", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  const auto s1 = fake_stream(1);
  void* p = alloc.allocate(30 * MiB, s1);
  alloc.record_stream(p, s1);
  alloc.free(p);
  CHECK(device.events_recorded() == 0);
  CHECK(alloc.allocate(30 * MiB, s1) == p);
}

TEST_CASE("a pending block is not merged until its events complete", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  const auto s1 = fake_stream(1);
  void* a = alloc.allocate(4 * KiB, s1);
  void* b = alloc.allocate(4 * KiB, s1);
  alloc.record_stream(b, fake_stream(2));
  alloc.free(b);  // pending
  alloc.free(a);  // must not absorb b
  void* c = alloc.allocate(8 * KiB, s1);
  CHECK(c != a);  // a's 4 KiB alone is too small
  alloc.free(c);
  device.complete_all_events();
  void* d = alloc.allocate(8 * KiB, s1);
  CHECK(d == a);  // a + b merged once b's event completed
  alloc.free(d);
}

TEST_CASE("empty_cache returns exactly the wholly free segments", "[cuda][allocator]") {
  FakeAllocatorBackend device(1024 * MiB);
  CachingAllocator alloc(device, 0);
  const auto s1 = fake_stream(1);
  void* free_segment = alloc.allocate(12 * MiB, s1);
  void* partly_used = alloc.allocate(4 * KiB, s1);
  void* neighbour = alloc.allocate(4 * KiB, s1);
  void* pending = alloc.allocate(40 * MiB, s1);
  alloc.free(free_segment);
  alloc.free(neighbour);
  alloc.record_stream(pending, fake_stream(2));
  alloc.free(pending);
  REQUIRE(device.live_segments() == 3);

  alloc.empty_cache();
  CHECK(device.freed_segments() == std::vector<void*>{free_segment});
  CHECK(device.holds_segment(partly_used));
  CHECK(device.holds_segment(pending));  // its event has not completed
  CHECK(alloc.stats().reserved == 2 * MiB + 40 * MiB);

  device.complete_events_on(fake_stream(2));
  alloc.empty_cache();
  CHECK(device.freed_segments() == std::vector<void*>{free_segment, pending});
  CHECK(alloc.stats().reserved == 2 * MiB);
  alloc.free(partly_used);
  alloc.empty_cache();
  CHECK(device.live_segments() == 0);
  CHECK(alloc.stats().reserved == 0);
  CHECK(device.bad_calls() == 0);
}

TEST_CASE("out of memory: the cache goes back to the device and the request is retried",
          "[cuda][allocator]") {
  FakeAllocatorBackend device(64 * MiB);
  CachingAllocator alloc(device, 0);
  void* kept = alloc.allocate(30 * MiB, nullptr);
  alloc.free(alloc.allocate(20 * MiB, nullptr));  // 20 MiB cached
  alloc.free(alloc.allocate(4 * KiB, nullptr));   // 2 MiB cached
  REQUIRE(device.used_bytes() == 52 * MiB);

  // 26 MiB do not fit in the 12 MiB left, but do once the cache is returned.
  void* big = alloc.allocate(26 * MiB, nullptr);
  CHECK(big != nullptr);
  CHECK(device.refused_allocs() == 1);
  CHECK(device.free_calls() == 2);
  auto s = alloc.stats();
  CHECK(s.reserved == 56 * MiB);
  CHECK(s.num_ooms == 0);
  alloc.free(big);
  alloc.free(kept);
}

TEST_CASE("a block whose events completed is reused before the device is asked",
          "[cuda][allocator]") {
  FakeAllocatorBackend device(40 * MiB);
  CachingAllocator alloc(device, 0);
  void* p = alloc.allocate(30 * MiB, nullptr);
  alloc.record_stream(p, fake_stream(2));
  alloc.free(p);
  device.complete_all_events();
  // The event is processed at the start of the call: p is reused, not
  // refused by the device.
  CHECK(alloc.allocate(30 * MiB, nullptr) == p);
  CHECK(device.refused_allocs() == 0);
}

TEST_CASE("out of memory: the error names the runtime the allocator serves", "[cuda][allocator]") {
  // The HIP plugin shares this allocator; its messages must not say CUDA.
  FakeAllocatorBackend device(4 * MiB);
  CachingAllocator alloc(device, 1, "HIP");
  CHECK_THROWS_WITH(alloc.allocate(8 * MiB, nullptr),
                    Catch::StartsWith("HIP out of memory on device 1: tried to allocate 8.00 MiB"));
  int local = 0;
  CHECK_THROWS_WITH(alloc.free(&local), Catch::StartsWith("HIP caching allocator (device 1): "));
}

TEST_CASE("out of memory: the error states the four sizes", "[cuda][allocator]") {
  FakeAllocatorBackend device(64 * MiB);
  CachingAllocator alloc(device, 3);
  void* a = alloc.allocate(30 * MiB, nullptr);
  void* b = alloc.allocate(25 * MiB + 512, nullptr);  // a 26 MiB segment, not split
  void* pending = alloc.allocate(4 * KiB, fake_stream(1));
  alloc.record_stream(pending, fake_stream(2));
  alloc.free(pending);  // its 2 MiB segment cannot be returned yet
  try {
    alloc.allocate(40 * MiB, nullptr);
    FAIL("a 40 MiB allocation with 6 MiB free did not throw");
  } catch (const OutOfMemory& e) {
    CHECK(std::string(e.what()) ==
          "CUDA out of memory on device 3: tried to allocate 40.00 MiB; the device has "
          "6.00 MiB free of 64.00 MiB; loom holds 58.00 MiB reserved, of which 56.00 MiB "
          "allocated to tensors");
    CHECK(e.device_index == 3);
    CHECK(e.requested == 40 * MiB);
    CHECK(e.device_free == 6 * MiB);
    CHECK(e.device_total == 64 * MiB);
    CHECK(e.reserved == 58 * MiB);
    CHECK(e.allocated == 56 * MiB);
  }
  CHECK(device.refused_allocs() == 2);  // tried, returned nothing cached, retried
  auto s = alloc.stats();
  CHECK(s.num_ooms == 1);
  CHECK(s.num_allocs == 3);
  CHECK(s.allocated == 56 * MiB);
  // OutOfMemory is a runtime_error: generic handlers catch it.
  CHECK_THROWS_AS(alloc.allocate(SIZE_MAX, nullptr), std::runtime_error);
  CHECK(alloc.stats().num_ooms == 2);
  alloc.free(a);
  alloc.free(b);
}

TEST_CASE("sizes in messages use binary units with two decimals", "[cuda][allocator]") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(1024) == "1.00 KiB");
  CHECK(format_bytes(1536) == "1.50 KiB");
  CHECK(format_bytes(20 * MiB) == "20.00 MiB");
  CHECK(format_bytes(2048 * MiB) == "2.00 GiB");
  CHECK(format_bytes(1536 * MiB) == "1.50 GiB");
  CHECK(format_bytes(size_t{80} << 30) == "80.00 GiB");
  CHECK(format_bytes(size_t{5} << 40) == "5120.00 GiB");
}

}  // namespace loom::gpu::test
