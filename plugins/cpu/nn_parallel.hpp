// Work sharing for the nn kernels: like common.hpp's parallel_for, but the
// range is handed out in chunks from a shared counter rather than split in
// equal halves up front. A softmax or layer_norm row costs the same on
// every thread, yet on a shared machine one thread of the team often starts
// late or loses its core for a while; with static halves the call then
// waits for it, with chunks the others take over its rows.
#pragma once

#include "common.hpp"

#include <algorithm>
#include <atomic>

namespace loom::cpu {

// Runs f(begin, end) over [0, n) in chunks of at least `grain` (about
// eight per thread), on the calling thread alone when n <= grain or inside
// a parallel region. An exception f throws reaches the caller (the first
// one; the team stops taking chunks).
template <class F>
inline void parallel_chunks(int64_t n, int64_t grain, F&& f) {
  if (n <= grain || omp_in_parallel()) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
  const int64_t want = std::min<int64_t>((n + grain - 1) / grain, max_threads());
  if (want <= 1) {
    f(int64_t{0}, n);
    return;
  }
  const int64_t chunk = std::max<int64_t>(grain, n / (want * 8));
  std::atomic<int64_t> next{0};
  RegionError error;
#pragma omp parallel num_threads(static_cast<int>(want))
  {
    error.run([&] {
      while (!error.failed()) {
        const int64_t b = next.fetch_add(chunk, std::memory_order_relaxed);
        if (b >= n) break;
        f(b, std::min(n, b + chunk));
      }
    });
  }
  error.rethrow();
}

}  // namespace loom::cpu
