// nn_test_util.h — comparisons for the loom::nn tests (values as float64 on
// the host, so any dtype and device compares).
#pragma once

#include <loom/loom.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

namespace nn_test {

inline std::vector<double> values(const loom::Tensor& t) {
  return t.detach().cpu().to(loom::DType::Float64).contiguous().to_vector<double>();
}

// Elementwise |a - b| <= atol + rtol |b|, with the first offending index
// reported by Catch.
inline void check_close(const loom::Tensor& actual, const std::vector<double>& expected,
                        double atol = 1e-5, double rtol = 1e-4) {
  const auto got = values(actual);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - expected[i]) <= atol + rtol * std::abs(expected[i]));
  }
}

inline void check_close(const loom::Tensor& actual, const loom::Tensor& expected,
                        double atol = 1e-5, double rtol = 1e-4) {
  REQUIRE(actual.shape() == expected.shape());
  check_close(actual, values(expected), atol, rtol);
}

inline bool same_values(const loom::Tensor& a, const loom::Tensor& b) {
  return a.shape() == b.shape() && values(a) == values(b);
}

// A float32 tensor of `shape` from values.
inline loom::Tensor tensor(const std::vector<float>& v, std::vector<int64_t> shape) {
  return loom::from_vector<float>(v, shape);
}

}  // namespace nn_test
