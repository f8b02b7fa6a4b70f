// loom/plugin/lru_cache.hpp — a small thread-safe least-recently-used cache
// keyed by integer vectors, for what a kernel plans once per problem shape
// and reuses (oneDNN primitives, cuDNN algorithm choices). Models call with
// the same few shapes over and over, and a plan can cost far more than a
// small kernel. Host code; C++17.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace loom::plugin {

template <class Entry>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  // The entry for `key`, built by `make` on a miss — outside the lock, since
  // a build may take milliseconds (a JIT, a heuristics query). `make` may
  // throw; nothing is cached then. Entries are shared, so one stays valid
  // while another thread evicts it. Two threads missing on one key both
  // build; the later insert wins, both results are valid.
  template <class Make>
  std::shared_ptr<const Entry> get(const std::vector<int64_t>& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (Slot& s : slots_)
        if (s.key == key) {
          s.last_use = ++clock_;
          return s.entry;
        }
    }
    auto fresh = std::make_shared<const Entry>(make());
    std::lock_guard<std::mutex> lock(mu_);
    Slot slot{key, fresh, ++clock_};
    for (Slot& s : slots_)
      if (s.key == key) {  // another thread built it meanwhile: replace
        s = std::move(slot);
        return fresh;
      }
    if (slots_.size() < capacity_) {
      slots_.push_back(std::move(slot));
    } else if (!slots_.empty()) {
      auto lru = std::min_element(slots_.begin(), slots_.end(),
                                  [](const Slot& a, const Slot& b) { return a.last_use < b.last_use; });
      *lru = std::move(slot);
    }
    return fresh;
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return slots_.size();
  }

 private:
  struct Slot {
    std::vector<int64_t> key;
    std::shared_ptr<const Entry> entry;
    uint64_t last_use = 0;
  };
  size_t capacity_;
  std::mutex mu_;
  uint64_t clock_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace loom::plugin
