// max_pool2d (with indices), avg_pool2d and adaptive_avg_pool2d end to end
// against the naive loops of conv_reference.hpp, plus values computed with
// torch 1.13 for the ceil-mode corner cases, and every argument error.
#include "conv_reference.hpp"

#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <cmath>

using loom::DType;
using loom::Tensor;

namespace {

conv_ref::Array4 ref_of(const Tensor& t) {
  REQUIRE(t.dim() == 4);
  return {t.to_vector<double>(), t.size(0), t.size(1), t.size(2), t.size(3)};
}

void check_close(const Tensor& got, const conv_ref::Array4& want, double tol) {
  REQUIRE(got.dim() == 4);
  CHECK(got.sizes() == loom::IntArrayRef({want.n, want.c, want.h, want.w}));
  const auto g = got.to_vector<double>();
  REQUIRE(g.size() == want.v.size());
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(want.v[i])) {
      CHECK(std::isnan(g[i]));
      continue;
    }
    worst = std::max(worst, std::abs(g[i] - want.v[i]) / (1.0 + std::abs(want.v[i])));
  }
  CHECK(worst <= tol);
}

const conv_ref::Pool kPools[] = {
    {2, 2, 2, 2},
    {3, 3, 2, 2, 1, 1},
    {3, 2, 1, 2, 1, 0},
    {3, 3, 2, 2, 1, 1, 1, 1, true},
    {2, 3, 3, 2, 1, 1, 1, 1, true},
    {3, 3, 1, 1, 1, 1, 2, 2},      // dilated (max only)
    {2, 2, 3, 3, 1, 0, 2, 1, true},  // dilated, ceil
};

}  // namespace

TEST_CASE("max_pool2d and its indices match the direct loop", "[conv]") {
  for (DType t : {DType::Float32, DType::Float64, DType::BFloat16}) {
    for (const auto& p : kPools) {
      CAPTURE(loom::name(t), p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw, p.ceil);
      Tensor x = loom::randn({2, 3, 9, 10}).to(t);
      auto want = conv_ref::max_pool2d(ref_of(x), p);
      auto y = loom::max_pool2d(x, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, {p.dh, p.dw}, p.ceil);
      CHECK(y.dtype() == t);
      check_close(y, want.first, 0.0);
      auto [v, i] = loom::max_pool2d_with_indices(x, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, {p.dh, p.dw}, p.ceil);
      check_close(v, want.first, 0.0);
      CHECK(i.dtype() == DType::Int64);
      CHECK(i.to_vector<int64_t>() == want.second);
    }
  }
}

TEST_CASE("max_pool2d: defaults, NaN, unbatched and strided input", "[conv]") {
  // stride defaults to the kernel size.
  auto x = loom::arange(0, 16, 1, DType::Float32).view({1, 1, 4, 4});
  CHECK(loom::max_pool2d(x, {2}).to_vector<float>() == std::vector<float>{5, 7, 13, 15});
  auto [v, i] = loom::max_pool2d_with_indices(x.select(0, 0), {2});
  CHECK(v.sizes() == loom::IntArrayRef({1, 2, 2}));
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{5, 7, 13, 15});
  // NaN wins its window (torch 1.13: values [nan, 7, 13, 15], index 1).
  auto n = loom::from_vector<float>({0, NAN, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {1, 1, 4, 4});
  auto [nv, ni] = loom::max_pool2d_with_indices(n, {2});
  CHECK(std::isnan(nv.to_vector<float>()[0]));
  CHECK(ni.to_vector<int64_t>()[0] == 1);
  // The same through the values-only kernel, NaN first and last in a row.
  auto n2 = loom::from_vector<float>({1, 5, NAN, 2, 0, 0, 0, 0, 0}, {1, 1, 3, 3});
  auto nv2 = loom::max_pool2d(n2, {3}, {2}, {1}).to_vector<float>();
  REQUIRE(nv2.size() == 4);
  CHECK(nv2[0] == 5);
  CHECK(std::isnan(nv2[1]));
  CHECK(std::isnan(loom::max_pool2d(n, {2}).to_vector<float>()[0]));
  // Wide windows, narrow input: no interior columns at all.
  auto xw = loom::randn({1, 2, 3, 3});
  conv_ref::Pool pw{3, 3, 1, 1, 1, 1};
  check_close(loom::max_pool2d(xw, {3}, {1}, {1}), conv_ref::max_pool2d(ref_of(xw), pw).first, 0.0);
  // A transposed (non-contiguous) input.
  Tensor xt = loom::randn({2, 3, 7, 6}).transpose(2, 3);
  conv_ref::Pool p{3, 3, 2, 2, 1, 1};
  check_close(loom::max_pool2d(xt, {3}, {2}, {1}), conv_ref::max_pool2d(ref_of(xt), p).first, 0.0);
}

TEST_CASE("avg_pool2d: padding counted or not, ceil mode, divisor", "[conv]") {
  for (DType t : {DType::Float32, DType::Float64, DType::BFloat16}) {
    const double tol = t == DType::BFloat16 ? 1e-2 : 1e-6;
    for (const auto& p : kPools) {
      if (p.dh != 1 || p.dw != 1) continue;
      for (bool include : {true, false}) {
        CAPTURE(loom::name(t), p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.ceil, include);
        Tensor x = loom::randn({2, 3, 9, 10}).to(t);
        auto y = loom::avg_pool2d(x, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, p.ceil, include);
        check_close(y, conv_ref::avg_pool2d(ref_of(x), p, include), tol);
      }
      Tensor x = loom::randn({1, 2, 8, 8}).to(t);
      auto y = loom::avg_pool2d(x, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, p.ceil, true, 5);
      check_close(y, conv_ref::avg_pool2d(ref_of(x), p, true, 5), tol);
    }
  }
  // torch 1.13: F.avg_pool2d(torch.arange(25.).view(1,1,5,5), 2, 2, 1, ceil_mode=True)
  //   -> [[0, 0.75, 1.75], [3.75, 9, 11], [8.75, 19, 21]]
  auto a = loom::arange(0, 25, 1, DType::Float32).view({1, 1, 5, 5});
  CHECK(loom::avg_pool2d(a, {2}, {2}, {1}, true).to_vector<float>() ==
        std::vector<float>{0, 0.75f, 1.75f, 3.75f, 9, 11, 8.75f, 19, 21});
  //   count_include_pad=False -> [[0, 1.5, 3.5], [7.5, 9, 11], [17.5, 19, 21]]
  CHECK(loom::avg_pool2d(a, {2}, {2}, {1}, true, false).to_vector<float>() ==
        std::vector<float>{0, 1.5f, 3.5f, 7.5f, 9, 11, 17.5f, 19, 21});
  // Integers divide truncating toward zero, as PyTorch's int64 path.
  auto i = loom::from_vector<int64_t>({-3, 0, 0, 0, 7, 1, 1, 0}, {1, 2, 2, 2});
  auto yi = loom::avg_pool2d(i, {2});
  CHECK(yi.dtype() == DType::Int64);
  CHECK(yi.to_vector<int64_t>() == std::vector<int64_t>{0, 2});
  // Unbatched.
  CHECK(loom::avg_pool2d(a.select(0, 0), {5}).to_vector<float>() == std::vector<float>{12});
}

TEST_CASE("adaptive_avg_pool2d windows", "[conv]") {
  for (DType t : {DType::Float32, DType::Float64, DType::BFloat16}) {
    const double tol = t == DType::BFloat16 ? 1e-2 : 1e-6;
    for (auto [oh, ow] : {std::pair<int64_t, int64_t>{3, 3}, {2, 3}, {1, 1}, {7, 5}, {4, 10}}) {
      CAPTURE(loom::name(t), oh, ow);
      Tensor x = loom::randn({2, 3, 7, 5}).to(t);
      check_close(loom::adaptive_avg_pool2d(x, {oh, ow}), conv_ref::adaptive_avg_pool2d(ref_of(x), oh, ow), tol);
    }
  }
  auto a = loom::arange(0, 25, 1, DType::Float32).view({1, 5, 5});
  auto y = loom::adaptive_avg_pool2d(a, {2});
  CHECK(y.sizes() == loom::IntArrayRef({1, 2, 2}));
  // torch 1.13: windows rows/cols [0, 3) and [2, 5) -> [[6, 8], [16, 18]]
  CHECK(y.to_vector<float>() == std::vector<float>{6, 8, 16, 18});
}

TEST_CASE("global average pooling over whole planes, in any plane layout", "[conv]") {
  // Output 1×1 from planes stored as contiguous runs takes the CPU's
  // whole-plane pass (16 partial sums, a tail under 16); other layouts the
  // general window loop. Both must agree with the reference.
  for (DType t : {DType::Float32, DType::Float64, DType::BFloat16}) {
    const double tol = t == DType::BFloat16 ? 1e-2 : 1e-6;
    for (const auto& shape : {std::vector<int64_t>{2, 5, 7, 7}, {1, 3, 4, 4}, {2, 2, 3, 5}, {1, 1, 1, 1},
                              {1, 2, 12, 20}, {3, 1, 1, 17}}) {
      CAPTURE(loom::name(t), shape);
      const Tensor x = loom::randn(shape).to(t);
      const auto want = conv_ref::adaptive_avg_pool2d(ref_of(x), 1, 1);
      check_close(loom::adaptive_avg_pool2d(x, {1}), want, tol);
      // Each plane still one run, the planes 2·H·W apart.
      const Tensor apart = loom::cat({x, x}, 2).narrow(2, 0, shape[2]);
      check_close(loom::adaptive_avg_pool2d(apart, {1}), want, tol);
      // Channels last: no plane is a run, so the general loop.
      const Tensor last = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
      check_close(loom::adaptive_avg_pool2d(last, {1}), want, tol);
    }
  }
  // A large plane of one value averages to exactly that value.
  CHECK(loom::adaptive_avg_pool2d(loom::full({1, 1, 300, 300}, 0.1), {1}).to_vector<float>() ==
        std::vector<float>{0.1f});
}

TEST_CASE("pool argument errors name the op, the argument and the sizes", "[conv]") {
  auto x = loom::ones({1, 2, 4, 4});
  CHECK_THROWS_WITH(loom::max_pool2d(loom::ones({4, 4}), {2}),
                    Catch::Contains("max_pool2d: expected a 3D (unbatched) or 4D (batched) input, but got input of size [4, 4]"));
  CHECK_THROWS_WITH(loom::max_pool2d(loom::ones({1, 0, 4, 4}), {2}),
                    Catch::Contains("max_pool2d: expected input with non-zero size for non-batch dimensions"));
  CHECK_THROWS_WITH(loom::max_pool2d(x, {3}, {}, {2}),
                    Catch::Contains("max_pool2d: expected padding to be at most half of kernel_size, but got padding=[2, 2] and kernel_size=[3, 3]"));
  CHECK_THROWS_WITH(loom::avg_pool2d(x, {3}, {}, {2}), Catch::Contains("avg_pool2d: expected padding to be at most half"));
  CHECK_THROWS_WITH(loom::max_pool2d(x, {0}), Catch::Contains("max_pool2d: expected 'kernel_size' to be positive, but got [0, 0]"));
  CHECK_THROWS_WITH(loom::max_pool2d(x, {2}, {0}), Catch::Contains("max_pool2d: expected 'stride' to be positive"));
  CHECK_THROWS_WITH(loom::max_pool2d(x, {2}, {}, {0}, {0}), Catch::Contains("max_pool2d: expected 'dilation' to be positive"));
  CHECK_THROWS_WITH(loom::max_pool2d(x, {2, 2, 2}), Catch::Contains("max_pool2d: expected 'kernel_size' to have 1 or 2 elements, but got 3"));
  CHECK_THROWS_WITH(loom::max_pool2d(loom::ones({1, 1, 2, 2}), {3}),
                    Catch::Contains("max_pool2d: given input size (1x2x2), the calculated output size (1x0x0) is too small"));
  CHECK_THROWS_WITH(loom::max_pool2d(x.to(DType::Int64), {2}),
                    Catch::Contains("max_pool2d: expected a floating point input, but got int64"));
  CHECK_THROWS_WITH(loom::max_pool2d_with_indices(x.to(DType::Int32), {2}), Catch::Contains("max_pool2d_with_indices: expected a floating point input"));
  CHECK_THROWS_WITH(loom::avg_pool2d(x.to(DType::Bool), {2}), Catch::Contains("avg_pool2d: expected a floating point input, but got bool"));
  CHECK_THROWS_WITH(loom::avg_pool2d(x, {2}, {}, {0}, false, true, 0), Catch::Contains("avg_pool2d: expected divisor_override to be non-zero"));
  CHECK_THROWS_WITH(loom::adaptive_avg_pool2d(x, {-1, 2}), Catch::Contains("adaptive_avg_pool2d: expected 'output_size' to be non-negative"));
  CHECK_THROWS_WITH(loom::adaptive_avg_pool2d(x.to(DType::Int64), {2}), Catch::Contains("adaptive_avg_pool2d: expected a floating point input, but got int64"));
  CHECK_THROWS_WITH(loom::adaptive_avg_pool2d(loom::ones({2, 2}), {2}), Catch::Contains("adaptive_avg_pool2d: expected a 3D (unbatched) or 4D (batched) input"));
}
