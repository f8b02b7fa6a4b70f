// digits.h — the 8x8 handwritten digits set that Debian's python3-sklearn
// ships, as loom tensors, split as samples/python/digits.py splits it.
//
// Read from the package's gzip'd CSV directly (64 pixel columns 0..16, then
// the label), with zlib: no sklearn, no external program. When the file is
// absent, says so on stderr and makes a seeded synthetic set of the same
// shape, so the samples still run.
#pragma once

#include <loom/tensor.h>

#include <cstdint>
#include <string>

namespace loom_samples {

inline constexpr const char* kDigitsCsv =
    "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

struct DigitsSplit {
  loom::Tensor x_train, y_train;  // float32 [n, 64] in [0, 1]; int64 [n] in 0..9
  loom::Tensor x_test, y_test;
  bool synthetic = false;  // the file was absent
};

// Rows are ordered by np.random.default_rng(seed).permutation(n); the first
// int(n * test_fraction) are the test set, the rest the training set —
// exactly digits.py's split. A file that exists but is not a digits CSV
// throws loom::Error naming the path, line and problem.
DigitsSplit load_digits(double test_fraction = 0.2, uint64_t seed = 0,
                        const std::string& path = kDigitsCsv);

}  // namespace loom_samples
