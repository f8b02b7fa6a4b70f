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

namespace nn_test {

// The numbers nn_reference_values.py's pattern() makes, in `shape`.
inline loom::Tensor pattern(std::vector<int64_t> shape, int salt, double scale = 1.0) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j)
    v[static_cast<size_t>(j)] =
        static_cast<float>((static_cast<double>((j * 7 + salt * 3 + 1) % 13) / 6.0 - 1.0) * scale);
  return loom::from_vector<float>(v, shape);
}

// Sets the i-th parameter (registration order) to pattern(shape, i, 0.5),
// as the reference script's fill_params does.
inline void fill_params(loom::nn::Module& m) {
  loom::autograd::NoGradGuard no_grad;
  int i = 0;
  for (auto& p : m.parameters()) p.copy_(pattern(p.shape(), i++, 0.5));
}

// Every parameter has a gradient after backward of sum(out).
inline void check_grads_flow(loom::nn::Module& m, const loom::Tensor& out) {
  m.zero_grad();
  out.sum().backward();
  for (const auto& [name, p] : m.named_parameters()) {
    INFO("parameter " << name);
    CHECK(p.grad().defined());
  }
}

}  // namespace nn_test
