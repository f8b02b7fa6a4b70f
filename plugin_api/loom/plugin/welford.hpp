// loom/plugin/welford.hpp — running mean and variance (var, std,
// var_mean, batch and layer statistics) in double, one element at a time
// (Welford) and two partial results at a time (Chan et al.), so a device
// may split a reduction over threads, blocks or chunks in any order and get
// the same statistics. Host and device (LOOM_HD); C++17.
#pragma once

#include <loom/plugin/host_device.hpp>

namespace loom::plugin {

// n values with mean `mean` and sum of squared deviations `m2`. Trivial
// (no default member initialisers) so it may live in GPU shared memory:
// start from Moments{0, 0, 0}.
struct Moments {
  double n, mean, m2;
};

// Adds one value (Welford's update).
LOOM_HD inline void welford_add(Moments& a, double v) {
  a.n += 1;
  const double d = v - a.mean;
  a.mean += d / a.n;
  a.m2 += d * (v - a.mean);
}

// Merges b into a (Chan, Golub and LeVeque's pairwise combination).
LOOM_HD inline void welford_combine(Moments& a, const Moments& b) {
  if (b.n == 0) return;
  if (a.n == 0) {
    a = b;
    return;
  }
  const double n = a.n + b.n, d = b.mean - a.mean;
  a.mean += d * (b.n / n);
  a.m2 += b.m2 + d * d * (a.n * b.n / n);
  a.n = n;
}

// m2 / max(0, count - correction): a divisor of 0 gives 0/0 = NaN (or
// m2/0 = inf), as PyTorch's var and std do. `count` is the number of
// elements reduced (a.n may be smaller for an empty partial).
LOOM_HD inline double welford_variance(const Moments& a, double count, double correction) {
  const double div = count - correction > 0 ? count - correction : 0.0;
  return a.m2 / div;
}

}  // namespace loom::plugin
