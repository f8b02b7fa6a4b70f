// The large-block cache behind the CPU allocator: a freed large block serves
// the next request of about its size, and nothing else.
#include "../host_allocator.hpp"
#include "../large_block_cache.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

using namespace loom::cpu;

TEST_CASE("large blocks are reused for requests of about their size", "[cpu][allocator]") {
  large_block_release_all();
  const size_t n = size_t{4} << 20;
  void* a = host_allocate(n);
  REQUIRE(a != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  std::memset(a, 1, n);
  host_free(a);
  void* b = host_allocate(n - 4096);  // a little smaller: the same block fits
  CHECK(b == a);
  host_free(b);
  void* c = host_allocate(2 * n);  // much larger: not served from the cache
  CHECK(c != a);
  std::memset(c, 2, 2 * n);  // and really that large
  void* d = host_allocate(n / 2);  // half the size: the cached block would waste memory
  CHECK(d != a);
  host_free(c);
  host_free(d);
  large_block_release_all();
  void* e = host_allocate(n);
  CHECK(reinterpret_cast<uintptr_t>(e) % 64 == 0);
  host_free(e);
}
