// Shared by the CPU indexing kernels (indexing_kernels.cpp, indexing_masked.cpp).
#pragma once

#include "common.hpp"

#include <atomic>
#include <cstdint>

namespace loom::cpu {

// 0 <= i < size in one compare.
inline bool in_bounds(int64_t i, int64_t size) {
  return static_cast<uint64_t>(i) < static_cast<uint64_t>(size);
}

// The first out-of-range index any thread saw; report() throws after the
// parallel loop (loop bodies must not throw).
struct BadIndex {
  std::atomic<bool> seen{false};
  int64_t value = 0;
  void record(int64_t v) {
    bool expected = false;
    if (seen.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) value = v;
  }
  // Fails with "<op>: index <v> is out of bounds for dimension <dim> with size <size>".
  void report(const char* op, int32_t dim, int64_t size) const;
};

}  // namespace loom::cpu
