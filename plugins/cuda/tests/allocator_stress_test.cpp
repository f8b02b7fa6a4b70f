// Many threads allocating and freeing at once: the bookkeeping must end
// balanced, and no byte may ever be handed to two live blocks.
#include <catch2/catch.hpp>

#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "caching_allocator.hpp"
#include "fake_allocator_backend.hpp"

namespace loom::gpu::test {

namespace {

// Every live block's [begin, end), shared by the threads: a block that
// overlaps one still live was handed out twice.
class LiveRanges {
 public:
  // False when [p, p + bytes) overlaps a live range.
  bool add(void* p, size_t bytes) {
    auto* begin = static_cast<char*>(p);
    std::lock_guard lock(mutex_);
    auto next = ranges_.lower_bound(begin);
    if (next != ranges_.end() && next->first < begin + bytes) return false;
    if (next != ranges_.begin() && std::prev(next)->second > begin) return false;
    ranges_.emplace(begin, begin + bytes);
    return true;
  }
  void remove(void* p) {
    std::lock_guard lock(mutex_);
    ranges_.erase(static_cast<char*>(p));
  }

 private:
  std::mutex mutex_;
  std::map<char*, char*> ranges_;
};

}  // namespace

TEST_CASE("4 threads x 10k random allocations and frees", "[cuda][allocator][threads]") {
  FakeAllocatorBackend device(2048 * MiB);
  CachingAllocator alloc(device, 0);
  LiveRanges ranges;
  std::atomic<int> overlaps{0};
  std::atomic<bool> stop_events{false};

  auto worker = [&](int id) {
    std::mt19937 rng(1234 + id);
    // Mostly small sizes, some up to the large classes.
    std::uniform_int_distribution<int> size_class(0, 9);
    std::uniform_int_distribution<size_t> small(1, 64 * KiB);
    std::uniform_int_distribution<size_t> large(1 * MiB, 12 * MiB);
    std::uniform_int_distribution<int> coin(0, 99);
    const auto own = fake_stream(1 + id);
    std::vector<void*> live;
    for (int step = 0; step < 10000; ++step) {
      const bool do_alloc = live.empty() || (live.size() < 32 && coin(rng) < 55);
      if (do_alloc) {
        const size_t bytes = size_class(rng) == 0 ? large(rng) : small(rng);
        void* p = alloc.allocate(bytes, own);
        if (!ranges.add(p, bytes)) ++overlaps;
        static_cast<char*>(p)[bytes - 1] = 1;  // the whole request is usable memory
        if (coin(rng) < 10) alloc.record_stream(p, fake_stream(1 + (id + 1) % 4));
        live.push_back(p);
      } else {
        std::uniform_int_distribution<size_t> pick(0, live.size() - 1);
        const size_t i = pick(rng);
        ranges.remove(live[i]);  // before free: the block may be reused at once
        alloc.free(live[i]);
        live[i] = live.back();
        live.pop_back();
      }
    }
    for (void* p : live) {
      ranges.remove(p);
      alloc.free(p);
    }
  };
  // Events complete in the background, as a device would finish work.
  std::thread completer([&] {
    while (!stop_events) {
      device.complete_all_events();
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> threads;
  for (int id = 0; id < 4; ++id) threads.emplace_back(worker, id);
  for (auto& t : threads) t.join();
  stop_events = true;
  completer.join();

  CHECK(overlaps == 0);
  auto s = alloc.stats();
  CHECK(s.allocated == 0);
  CHECK(s.num_allocs > 4 * 4000);
  CHECK(s.num_cache_hits > 0);
  CHECK(s.num_ooms == 0);
  device.complete_all_events();
  alloc.empty_cache();
  CHECK(alloc.stats().reserved == 0);
  CHECK(device.live_segments() == 0);
  CHECK(device.outstanding_events() == 0);
  CHECK(device.bad_calls() == 0);
}

}  // namespace loom::gpu::test
