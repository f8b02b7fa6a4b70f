// The vendor layer's double -> 16-bit conversions for HIP
// (vendor/round_to_odd.hpp), checked on the host against CUDA's own
// __double2half / __double2bfloat16, which round once: ties, values just
// off a tie, subnormals, overflow, signed zeros, NaN and random doubles.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "vendor/gpu_runtime.hpp"
#include "vendor/round_to_odd.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using loom::gpu_vendor::round_to_odd;

namespace {

template <class H>
uint16_t bits_of(H h) {
  uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}

void check(double d) {
  INFO("d = " << d << " (" << std::hexfloat << d << std::defaultfloat << ")");
  CHECK(bits_of(__float2half_rn(round_to_odd(d))) == bits_of(__double2half(d)));
  CHECK(bits_of(__float2bfloat16_rn(round_to_odd(d))) == bits_of(__double2bfloat16(d)));
}

}  // namespace

TEST_CASE("round_to_odd then float -> 16 bits rounds a double once") {
  std::vector<double> cases = {0.0, -0.0, 1.0, -1.0, 65504.0, 65520.0, 65519.999, 1e300, -1e300,
                               std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                               std::numeric_limits<double>::denorm_min(), 5.960464477539063e-08, 2.98e-08,
                               3.3895313892515355e+38, 3.4e38, 3.5e38, 1e-40, -1e-45};
  // Exact ties between neighbouring 16-bit values, and values a hair off
  // them (below float's precision, so rounding through float first
  // would land on the tie and round to even: the double-rounding error).
  for (double base : {1.0, 3.0, 1000.0, 1.0 / 3.0}) {
    for (int k = 0; k < 64; ++k) {
      const double half_tie = base * (1 + (2 * k + 1) * 0x1p-11);
      const double bf_tie = base * (1 + (2 * k + 1) * 0x1p-8);
      for (double tie : {half_tie, bf_tie})
        for (double nudge : {0.0, 0x1p-40, -0x1p-40, 0x1p-30, -0x1p-30}) {
          cases.push_back(tie * (1 + nudge));
          cases.push_back(-tie * (1 + nudge));
        }
    }
  }
  for (double d : cases) check(d);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-140, 130);
  for (int i = 0; i < 200000; ++i) check(std::ldexp(mantissa(rng), exponent(rng)) * (i % 2 ? 1 : -1));
  const float nan = round_to_odd(std::numeric_limits<double>::quiet_NaN());
  CHECK(nan != nan);
}
