// perf_timer.cpp — warm-up, minimum run time, device synchronization.
#include "perf_timer.h"

#include <chrono>

namespace loom::conformance {

double time_call_us(const std::function<void()>& call, Device device, double min_seconds) {
  using Clock = std::chrono::steady_clock;
  call();
  call();
  synchronize(device);
  const auto start = Clock::now();
  int64_t n = 0;
  double elapsed = 0;
  do {
    call();
    ++n;
    if (n % 8 == 0 || n < 3) synchronize(device);
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (n < 3 || elapsed < min_seconds);
  synchronize(device);
  elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  return elapsed * 1e6 / static_cast<double>(n);
}

}  // namespace loom::conformance
