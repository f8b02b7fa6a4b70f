// The CPU plugin's parallel loops: an exception thrown by the body on any
// thread of the OpenMP team reaches the caller (RegionError) instead of
// terminating the process, and the work otherwise covers the range once.
#include "../common.hpp"
#include "../nn_parallel.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

using namespace loom::cpu;

TEST_CASE("parallel_for and parallel_chunks cover the range once", "[cpu][parallel]") {
  const int64_t n = 1 << 20;
  std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
  parallel_for(n, 1 << 10, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)].fetch_add(1);
  });
  parallel_chunks(n, 1 << 10, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)].fetch_add(1);
  });
  bool twice = true;
  for (const auto& s : seen) twice = twice && s.load() == 2;
  CHECK(twice);
}

TEST_CASE("an exception in a parallel loop's body reaches the caller", "[cpu][parallel]") {
  const int64_t n = 1 << 20;
  // The last block throws: on a team of two it runs on a worker thread.
  auto body = [n](int64_t, int64_t e) {
    if (e == n) throw std::runtime_error("the last block failed");
  };
  CHECK_THROWS_WITH(parallel_for(n, 1 << 10, body), "the last block failed");
  CHECK_THROWS_WITH(parallel_chunks(n, 1 << 10, body), "the last block failed");
  // The loops still work afterwards.
  std::atomic<int64_t> sum{0};
  parallel_for(n, 1 << 10, [&](int64_t b, int64_t e) { sum += e - b; });
  CHECK(sum.load() == n);
}
