// numpy_permutation.h — numpy's np.random.default_rng(seed).permutation(n),
// bit for bit, so the C++ samples split the digits exactly as
// samples/python/digits.py does (and as the PyTorch comparison did).
//
// That call is SeedSequence(seed) -> PCG64 -> a Fisher-Yates shuffle drawing
// each index with masked rejection (numpy's random_interval). Each step
// follows numpy 1.17+'s source (bit_generator.pyx, pcg64.h,
// distributions.c); numpy documents these streams as stable.
#pragma once

#include <cstdint>
#include <vector>

namespace loom_samples {

// A permutation of 0..n-1, equal to np.random.default_rng(seed).permutation(n).
std::vector<int64_t> numpy_permutation(int64_t n, uint64_t seed);

}  // namespace loom_samples
