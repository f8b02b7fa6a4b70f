// numpy_permutation_check — numpy_permutation against values numpy 1.24
// printed: np.random.default_rng(seed).permutation(n). Exits 1 on a mismatch.
#include "numpy_permutation.h"

#include <cstdio>
#include <vector>

namespace {

int failures = 0;

void expect(const char* what, const std::vector<int64_t>& got, const std::vector<int64_t>& want) {
  if (got == want) return;
  ++failures;
  std::printf("FAIL %s:", what);
  for (auto v : got) std::printf(" %lld", static_cast<long long>(v));
  std::printf("\n");
}

}  // namespace

int main() {
  using loom_samples::numpy_permutation;
  auto digits = numpy_permutation(1797, 0);  // the digits split of seed 0
  expect("n=1797 seed=0 head", {digits.begin(), digits.begin() + 8},
         {360, 1773, 1482, 600, 850, 196, 968, 1742});
  expect("n=1797 seed=0 tail", {digits.end() - 4, digits.end()}, {184, 1528, 975, 607});
  expect("n=10 seed=7", numpy_permutation(10, 7), {8, 0, 7, 1, 3, 6, 2, 4, 5, 9});
  expect("n=6 seed=2^40+3 (two-word seed)", numpy_permutation(6, (1ULL << 40) + 3),
         {2, 5, 0, 3, 1, 4});
  expect("n=0", numpy_permutation(0, 0), {});
  std::printf("%s\n", failures ? "numpy_permutation: FAILED" : "numpy_permutation: ok");
  return failures ? 1 : 0;
}
