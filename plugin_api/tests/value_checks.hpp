// Checks of floating-point results shared by the host tests of the shared
// plugin headers (scalar_ops_test.cpp) and of the CUDA plugin's own functors
// (plugins/cuda/tests/elementwise_ops_test.cu): special values, and closeness
// to a reference computed independently (in double).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom::test {

inline constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kInff = std::numeric_limits<float>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// `got` is `want` rounded to float within `ulps` units in the last place;
// NaN matches NaN, infinities match exactly.
inline bool near(float got, double want, double ulps = 4) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want) || want == 0) return static_cast<double>(got) == want;
  const double w = static_cast<float>(want);
  const double ulp = std::ldexp(1.0, std::ilogb(w) - 23);
  return std::fabs(got - w) <= ulps * std::max(ulp, std::ldexp(1.0, -149));
}
inline bool near(double got, double want, double rel = 1e-14) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want) || want == 0) return got == want;
  return std::fabs(got - want) <= rel * std::fabs(want);
}

// PyTorch's allclose: |got - want| <= atol + rtol |want|.
inline bool close(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

inline bool is_neg_zero(double x) { return x == 0 && std::signbit(x); }
inline bool is_pos_zero(double x) { return x == 0 && !std::signbit(x); }

}  // namespace loom::test
