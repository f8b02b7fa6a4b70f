// fake_allocator_backend.hpp — an AllocatorBackend without a GPU, for the
// caching allocator's tests: malloc-backed segments under a byte budget,
// counted calls, and events that complete only when the test says so.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "allocator_backend.hpp"

namespace loom::gpu::test {

class FakeAllocatorBackend : public AllocatorBackend {
 public:
  explicit FakeAllocatorBackend(size_t budget_bytes) : budget_(budget_bytes) {}
  ~FakeAllocatorBackend() override {
    for (auto& [ptr, size] : segments_) std::free(ptr);
    for (FakeEvent* e : events_) delete e;
  }

  void* raw_alloc(size_t bytes) override {
    std::lock_guard lock(mutex_);
    ++alloc_calls_;
    if (bytes > budget_ - used_) {
      ++refused_allocs_;
      return nullptr;
    }
    void* ptr = std::malloc(bytes);
    if (ptr == nullptr) return nullptr;
    segments_.emplace(ptr, bytes);
    used_ += bytes;
    alloc_sizes_.push_back(bytes);
    return ptr;
  }

  void raw_free(void* ptr) override {
    std::lock_guard lock(mutex_);
    auto it = segments_.find(ptr);
    if (it == segments_.end()) {
      ++bad_calls_;  // not a live segment: a double or foreign free
      return;
    }
    used_ -= it->second;
    segments_.erase(it);
    freed_.push_back(ptr);
    std::free(ptr);
  }

  void mem_info(size_t* free, size_t* total) override {
    std::lock_guard lock(mutex_);
    *free = budget_ - used_;
    *total = budget_;
  }

  Event record_event(Stream stream) override {
    std::lock_guard lock(mutex_);
    auto* e = new FakeEvent{stream, false};
    events_.insert(e);
    ++events_recorded_;
    return e;
  }

  bool event_done(Event event) override {
    std::lock_guard lock(mutex_);
    auto* e = static_cast<FakeEvent*>(event);
    if (!events_.count(e)) {
      ++bad_calls_;  // queried after release, or never recorded
      return false;
    }
    return e->done;
  }

  void release_event(Event event) override {
    std::lock_guard lock(mutex_);
    auto* e = static_cast<FakeEvent*>(event);
    if (events_.erase(e) == 0) {
      ++bad_calls_;
      return;
    }
    delete e;
  }

  // Like a device: every event recorded so far has completed afterwards.
  void synchronize() override {
    std::lock_guard lock(mutex_);
    ++synchronize_calls_;
    for (FakeEvent* e : events_) e->done = true;
  }

  // --- what the test controls and inspects ---------------------------------
  void complete_events_on(Stream stream) {
    std::lock_guard lock(mutex_);
    for (FakeEvent* e : events_)
      if (e->stream == stream) e->done = true;
  }
  void complete_all_events() {
    std::lock_guard lock(mutex_);
    for (FakeEvent* e : events_) e->done = true;
  }
  size_t live_segments() const { return locked([&] { return segments_.size(); }); }
  bool holds_segment(void* ptr) const { return locked([&] { return segments_.count(ptr) == 1; }); }
  size_t used_bytes() const { return locked([&] { return used_; }); }
  size_t alloc_calls() const { return locked([&] { return alloc_calls_; }); }
  size_t refused_allocs() const { return locked([&] { return refused_allocs_; }); }
  size_t free_calls() const { return locked([&] { return freed_.size(); }); }
  std::vector<void*> freed_segments() const { return locked([&] { return freed_; }); }
  // Sizes of the successful raw_allocs, in order.
  std::vector<size_t> alloc_sizes() const { return locked([&] { return alloc_sizes_; }); }
  size_t last_alloc_size() const {
    std::lock_guard lock(mutex_);
    return alloc_sizes_.empty() ? 0 : alloc_sizes_.back();
  }
  size_t events_recorded() const { return locked([&] { return events_recorded_; }); }
  size_t outstanding_events() const { return locked([&] { return events_.size(); }); }
  size_t synchronize_calls() const { return locked([&] { return synchronize_calls_; }); }
  // Calls with a pointer or event the fake never handed out (must stay 0).
  size_t bad_calls() const { return locked([&] { return bad_calls_; }); }

 private:
  struct FakeEvent {
    Stream stream;
    bool done;
  };

  // Reads state under the fake's mutex (the stress test polls it while
  // other threads allocate).
  template <class Read>
  auto locked(Read read) const -> decltype(read()) {
    std::lock_guard lock(mutex_);
    return read();
  }

  mutable std::mutex mutex_;
  const size_t budget_;
  size_t used_ = 0;
  std::unordered_map<void*, size_t> segments_;
  std::vector<size_t> alloc_sizes_;
  std::vector<void*> freed_;
  std::unordered_set<FakeEvent*> events_;
  size_t alloc_calls_ = 0;
  size_t refused_allocs_ = 0;
  size_t events_recorded_ = 0;
  size_t synchronize_calls_ = 0;
  size_t bad_calls_ = 0;
};

// Distinct fake streams (never dereferenced).
inline AllocatorBackend::Stream fake_stream(int n) {
  return reinterpret_cast<AllocatorBackend::Stream>(static_cast<uintptr_t>(0x1000 * n));
}

inline constexpr size_t KiB = size_t{1} << 10;
inline constexpr size_t MiB = size_t{1} << 20;

}  // namespace loom::gpu::test
