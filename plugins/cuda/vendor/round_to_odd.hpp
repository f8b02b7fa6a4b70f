// Narrowing a double to a 16-bit float with one rounding, for a runtime
// that converts only from float (HIP 5.2 has no __double2half or
// __double2bfloat16): round the double to a float "to odd" (toward zero,
// then set the lowest bit when anything was lost), then round that float to
// nearest even. Round-to-odd to p bits followed by any rounding to q <= p - 2
// bits equals rounding the original once to q bits; float keeps 24 bits,
// half 11 and bfloat16 8. tests/round_to_odd_test.cu checks it against
// CUDA's own double conversions.
#pragma once

#include "gpu_target.hpp"

#include <cstdint>
#include <cstring>

namespace loom::gpu_vendor {

LOOM_HD inline float round_to_odd(double d) {
  float f = static_cast<float>(d);
  const double back = static_cast<double>(f);
  if (back == d || d != d) return f;  // exact, or NaN
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if ((back > d) == (d > 0)) bits -= 1;  // rounded away from zero (or to inf): one step back
  bits |= 1u;
  memcpy(&f, &bits, sizeof bits);
  return f;
}

}  // namespace loom::gpu_vendor
