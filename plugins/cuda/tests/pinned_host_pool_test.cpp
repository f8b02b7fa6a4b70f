// The pinned host pool (allocator/pinned_host_pool.hpp): size classes,
// reuse only after the copies recorded on a block are done, out of memory
// after releasing the cache, and pointer lookup for the copy slots.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "pinned_host_pool.hpp"

namespace loom::gpu::test {
namespace {

// malloc under a byte budget; events complete only when the test says so.
class FakePinnedBackend : public PinnedHostBackend {
 public:
  explicit FakePinnedBackend(size_t budget) : budget_(budget) {}
  ~FakePinnedBackend() override { CHECK(live_.empty()); }

  void* raw_alloc(size_t bytes) override {
    std::lock_guard lock(mu_);
    if (bytes > budget_ - used_) return nullptr;
    void* p = std::malloc(bytes);
    live_[p] = bytes;
    used_ += bytes;
    ++allocs;
    return p;
  }
  void raw_free(void* p) override {
    std::lock_guard lock(mu_);
    auto it = live_.find(p);
    REQUIRE(it != live_.end());
    used_ -= it->second;
    live_.erase(it);
    std::free(p);
    ++frees;
  }
  Event record_event(int device, Stream stream) override {
    std::lock_guard lock(mu_);
    auto* e = new Ev{device, stream, false};
    events_.insert(e);
    return e;
  }
  bool event_done(Event e) override {
    std::lock_guard lock(mu_);
    REQUIRE(events_.count(static_cast<Ev*>(e)));
    return static_cast<Ev*>(e)->done;
  }
  void release_event(Event e) override {
    std::lock_guard lock(mu_);
    REQUIRE(events_.erase(static_cast<Ev*>(e)) == 1);
    delete static_cast<Ev*>(e);
  }
  void complete_all() {
    std::lock_guard lock(mu_);
    for (Ev* e : events_) e->done = true;
  }
  size_t live_events() {
    std::lock_guard lock(mu_);
    return events_.size();
  }

  int allocs = 0, frees = 0;

 private:
  struct Ev {
    int device;
    Stream stream;
    bool done;
  };
  std::mutex mu_;
  size_t budget_, used_ = 0;
  std::map<void*, size_t> live_;
  std::set<Ev*> events_;
};

void* stream(int i) { return reinterpret_cast<void*>(static_cast<uintptr_t>(i)); }

}  // namespace

TEST_CASE("pinned blocks come in power-of-two classes of at least 512 bytes", "[cuda][pinned]") {
  CHECK(PinnedHostPool::block_size(1) == 512);
  CHECK(PinnedHostPool::block_size(512) == 512);
  CHECK(PinnedHostPool::block_size(513) == 1024);
  CHECK(PinnedHostPool::block_size((1 << 20) + 1) == (2 << 20));
  CHECK(PinnedHostPool::block_size(~size_t{0}) == 0);  // no such block
}

TEST_CASE("a freed pinned block is reused once its copies are done", "[cuda][pinned]") {
  FakePinnedBackend host(64 << 20);
  {
    PinnedHostPool pool(host);
    void* p = pool.allocate(1000);
    CHECK(pool.contains(p));
    CHECK(pool.contains(static_cast<char*>(p) + 1023));   // the whole 1 KiB block
    CHECK_FALSE(pool.contains(static_cast<char*>(p) + 1024));
    int local = 0;
    CHECK_FALSE(pool.record_use(&local, 0, stream(1)));  // pageable: not ours
    CHECK(pool.record_use(static_cast<char*>(p) + 16, 0, stream(1)));
    pool.free(p);
    CHECK_FALSE(pool.contains(p));  // freed blocks are no longer copy targets
    CHECK(pool.stats().allocated_bytes == 0);
    CHECK(pool.stats().reserved_bytes == 1024);

    void* q = pool.allocate(1000);  // the copy may still read p: a new block
    CHECK(q != p);
    CHECK(host.allocs == 2);
    pool.free(q);
    host.complete_all();
    void* r = pool.allocate(900);  // same class, copies done: cached
    CHECK((r == p || r == q));
    CHECK(host.allocs == 2);
    CHECK(pool.stats().num_cache_hits == 1);
    CHECK(host.live_events() == 0);  // settled events were released
    pool.free(r);
    pool.free(r);  // a second free is ignored
    int other = 0;
    pool.free(&other);  // and so is a foreign pointer
    CHECK(pool.stats().allocated_bytes == 0);
  }
  CHECK(host.frees == 2);  // the destructor gives everything back
}

TEST_CASE("pinned out of memory releases the cache first, then says what it holds", "[cuda][pinned]") {
  FakePinnedBackend host(4096);
  PinnedHostPool pool(host);
  void* a = pool.allocate(2048);
  void* b = pool.allocate(1024);
  pool.free(b);
  // 1 KiB is left in the budget and 1 KiB is cached: a 2 KiB request fits
  // only after the cache is released.
  void* c = pool.allocate(1500);
  CHECK(host.frees == 1);
  try {
    (void)pool.allocate(4000);
    FAIL("expected PinnedOutOfMemory");
  } catch (const PinnedOutOfMemory& e) {
    CHECK_THAT(e.what(), Catch::Contains("out of pinned host memory") && Catch::Contains("3.91 KiB") &&
                             Catch::Contains("4.00 KiB of pinned memory"));
  }
  pool.free(a);
  pool.free(c);
  pool.empty_cache();
  CHECK(pool.stats().reserved_bytes == 0);
}

TEST_CASE("pinned out of memory names the pool's device type", "[cuda][pinned]") {
  FakePinnedBackend host(1024);
  PinnedHostPool cuda_pool(host), hip_pool(host, "hip");  // the HIP plugin shares this pool
  CHECK_THROWS_WITH(cuda_pool.allocate(4096), Catch::StartsWith("cuda: out of pinned host memory"));
  CHECK_THROWS_WITH(hip_pool.allocate(4096), Catch::StartsWith("hip: out of pinned host memory"));
}

TEST_CASE("a cached block with a copy still in flight survives empty_cache", "[cuda][pinned]") {
  FakePinnedBackend host(1 << 20);
  PinnedHostPool pool(host);
  void* p = pool.allocate(100);
  REQUIRE(pool.record_use(p, 1, stream(7)));
  pool.free(p);
  pool.empty_cache();
  CHECK(host.frees == 0);
  host.complete_all();
  pool.empty_cache();
  CHECK(host.frees == 1);
}

TEST_CASE("pinned allocations from several threads never overlap", "[cuda][pinned]") {
  FakePinnedBackend host(256 << 20);
  PinnedHostPool pool(host);
  std::vector<std::thread> threads;
  std::mutex seen_mu;
  std::map<uintptr_t, size_t> live;
  bool overlap = false;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const size_t n = 100 + static_cast<size_t>((i * 37 + t * 11) % 5000);
        void* p = pool.allocate(n);
        pool.record_use(p, t, stream(t + 1));
        {
          std::lock_guard lock(seen_mu);
          const auto a = reinterpret_cast<uintptr_t>(p);
          auto next = live.lower_bound(a);
          if (next != live.end() && next->first < a + n) overlap = true;
          if (next != live.begin() && std::prev(next)->first + std::prev(next)->second > a) overlap = true;
          live[a] = n;
        }
        if (i % 3 == 0) host.complete_all();
        {
          std::lock_guard lock(seen_mu);
          live.erase(reinterpret_cast<uintptr_t>(p));
        }
        pool.free(p);
      }
    });
  for (auto& th : threads) th.join();
  CHECK_FALSE(overlap);
  CHECK(pool.stats().allocated_bytes == 0);
  host.complete_all();
}

}  // namespace loom::gpu::test
