// conv1d, conv2d and conv_transpose2d end to end against the naive loops of
// conv_reference.hpp: oneDNN (float32, bfloat16) and loop (float64, int64)
// paths, strides, padding, dilation, groups, bias, unbatched and
// non-contiguous inputs, padding strings, and every argument error.
#include "conv_reference.hpp"

#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <string>

using loom::DType;
using loom::Tensor;

namespace {

conv_ref::Array4 ref_of(const Tensor& t) {
  REQUIRE(t.dim() == 4);
  return {t.to_vector<double>(), t.size(0), t.size(1), t.size(2), t.size(3)};
}

void check_close(const Tensor& got, const conv_ref::Array4& want, double tol) {
  REQUIRE(got.dim() == 4);
  REQUIRE(got.size(0) == want.n);
  REQUIRE(got.size(1) == want.c);
  REQUIRE(got.size(2) == want.h);
  REQUIRE(got.size(3) == want.w);
  const auto g = got.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i)
    worst = std::max(worst, std::abs(g[i] - want.v[i]) / (1.0 + std::abs(want.v[i])));
  CHECK(worst <= tol);
}

std::vector<double> bias_of(const std::optional<Tensor>& b) {
  return b ? b->to_vector<double>() : std::vector<double>{};
}

struct Case {
  int64_t n, c, h, w, o, kh, kw;
  conv_ref::Params p;
  bool bias;
};

// Forward configurations: plain, strided, padded, dilated, grouped,
// depthwise, non-square, 1x1, stride larger than the kernel.
const Case kForward[] = {
    {2, 3, 8, 8, 4, 3, 3, {}, true},
    {1, 4, 9, 7, 6, 3, 2, {2, 1, 1, 0, 1, 1, 1}, false},
    {2, 4, 10, 10, 4, 3, 3, {1, 1, 2, 2, 2, 2, 1}, true},
    {1, 4, 6, 6, 6, 3, 3, {1, 2, 1, 1, 1, 1, 2}, true},
    {2, 8, 7, 7, 8, 3, 3, {1, 1, 1, 1, 1, 1, 8}, false},
    {1, 16, 5, 5, 32, 1, 1, {}, true},
    {1, 2, 11, 11, 3, 2, 2, {3, 3, 0, 1, 1, 1, 1}, true},
};

Tensor run_forward(const Case& k, DType t, Tensor* x_out = nullptr, Tensor* w_out = nullptr,
                   std::optional<Tensor>* b_out = nullptr) {
  Tensor x = loom::randn({k.n, k.c, k.h, k.w}).to(t);
  Tensor w = loom::randn({k.o, k.c / k.p.groups, k.kh, k.kw}).to(t);
  std::optional<Tensor> b;
  if (k.bias) b = loom::randn({k.o}).to(t);
  if (x_out) *x_out = x;
  if (w_out) *w_out = w;
  if (b_out) *b_out = b;
  return loom::conv2d(x, w, b, {k.p.sh, k.p.sw}, {k.p.ph, k.p.pw}, {k.p.dh, k.p.dw}, k.p.groups);
}

}  // namespace

TEST_CASE("conv2d matches the direct loop in every dtype", "[conv]") {
  const std::pair<DType, double> dtypes[] = {
      {DType::Float32, 1e-4}, {DType::Float64, 1e-12}, {DType::BFloat16, 3e-2}, {DType::Float16, 3e-3}};
  for (auto [t, tol] : dtypes) {
    for (const Case& k : kForward) {
      CAPTURE(loom::name(t), k.c, k.o, k.p.sh, k.p.ph, k.p.dh, k.p.groups);
      Tensor x, w;
      std::optional<Tensor> b;
      Tensor y = run_forward(k, t, &x, &w, &b);
      CHECK(y.dtype() == t);
      check_close(y, conv_ref::conv2d(ref_of(x), ref_of(w), bias_of(b), k.p), tol);
    }
  }
}

TEST_CASE("conv2d on integers is exact", "[conv]") {
  auto x = loom::arange(0, 2 * 3 * 5 * 5, 1, DType::Int64).view({2, 3, 5, 5});
  auto w = loom::arange(-10, 2 * 3 * 3 * 3 - 10, 1, DType::Int64).view({2, 3, 3, 3});
  auto b = loom::from_vector<int64_t>({7, -7}, {2});
  conv_ref::Params p{2, 2, 1, 1, 1, 1, 1};
  auto y = loom::conv2d(x, w, b, {2}, {1});
  CHECK(y.dtype() == DType::Int64);
  check_close(y, conv_ref::conv2d(ref_of(x), ref_of(w), {7, -7}, p), 0.0);
  // int32 too (PyTorch's slow path takes every integer type).
  check_close(loom::conv2d(x.to(DType::Int32), w.to(DType::Int32), b.to(DType::Int32), {2}, {1}),
              conv_ref::conv2d(ref_of(x), ref_of(w), {7, -7}, p), 0.0);
}

TEST_CASE("conv2d reads non-contiguous operands and unbatched input", "[conv]") {
  for (DType t : {DType::Float32, DType::Float64}) {
    // A transposed input (H and W swapped in memory) and a weight sliced
    // out of a larger one.
    Tensor xt = loom::randn({2, 3, 9, 8}).to(t).transpose(2, 3);
    Tensor wbig = loom::randn({4, 6, 3, 3}).to(t);
    Tensor w = wbig.narrow(1, 2, 3);
    Tensor b = loom::randn({8}).to(t).narrow(0, 0, 4);
    conv_ref::Params p{1, 2, 1, 0, 1, 1, 1};
    auto y = loom::conv2d(xt, w, b, {1, 2}, {1, 0});
    check_close(y, conv_ref::conv2d(ref_of(xt), ref_of(w), b.to_vector<double>(), p), 1e-4);

    Tensor x3 = loom::randn({3, 6, 6}).to(t);
    auto y3 = loom::conv2d(x3, w, b, {1}, {1});
    REQUIRE(y3.dim() == 3);
    CHECK(y3.sizes() == loom::IntArrayRef({4, 6, 6}));
    conv_ref::Params q{1, 1, 1, 1, 1, 1, 1};
    check_close(y3.unsqueeze(0), conv_ref::conv2d(ref_of(x3.unsqueeze(0)), ref_of(w), b.to_vector<double>(), q),
                1e-4);
  }
  // An empty batch gives an empty result.
  CHECK(loom::conv2d(loom::zeros({0, 3, 5, 5}), loom::zeros({2, 3, 3, 3})).sizes() ==
        loom::IntArrayRef({0, 2, 3, 3}));
}

TEST_CASE("conv1d is conv2d of height one, batched or not", "[conv]") {
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor x = loom::randn({2, 4, 13}).to(t);
    Tensor w = loom::randn({6, 2, 3}).to(t);
    Tensor b = loom::randn({6}).to(t);
    auto y = loom::conv1d(x, w, b, {2}, {2}, {2}, 2);
    REQUIRE(y.sizes() == loom::IntArrayRef({2, 6, 7}));
    conv_ref::Params p{1, 2, 0, 2, 1, 2, 2};
    check_close(y.unsqueeze(2), conv_ref::conv2d(ref_of(x.unsqueeze(2)), ref_of(w.unsqueeze(2)),
                                                 b.to_vector<double>(), p),
                1e-4);
    auto y2 = loom::conv1d(x.select(0, 1), w, b, {2}, {2}, {2}, 2);
    REQUIRE(y2.dim() == 2);
    check_close(y2.unsqueeze(0).unsqueeze(2), conv_ref::conv2d(ref_of(x.narrow(0, 1, 1).unsqueeze(2)),
                                                               ref_of(w.unsqueeze(2)), b.to_vector<double>(), p),
                1e-4);
  }
}

TEST_CASE("padding 'same' and 'valid'", "[conv]") {
  Tensor x = loom::randn({1, 2, 7, 8});
  // Odd kernel: symmetric padding. Even kernel: PyTorch puts the extra
  // padding at the end, which the reference reproduces by padding one more
  // at both ends and dropping the first output row/column.
  Tensor w3 = loom::randn({3, 2, 3, 3});
  auto same3 = loom::conv2d(x, w3, std::nullopt, {1}, "same");
  CHECK(same3.sizes() == loom::IntArrayRef({1, 3, 7, 8}));
  check_close(same3, conv_ref::conv2d(ref_of(x), ref_of(w3), {}, {1, 1, 1, 1, 1, 1, 1}), 1e-4);
  Tensor w4 = loom::randn({3, 2, 4, 2});
  auto same4 = loom::conv2d(x, w4, std::nullopt, {1}, "same");
  REQUIRE(same4.sizes() == loom::IntArrayRef({1, 3, 7, 8}));
  auto big = conv_ref::conv2d(ref_of(x), ref_of(w4), {}, {1, 1, 2, 1, 1, 1, 1});  // [1,3,8,9]
  conv_ref::Array4 want = conv_ref::make(1, 3, 7, 8);
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t i = 0; i < 7; ++i)
      for (int64_t j = 0; j < 8; ++j) want.at(0, o, i, j) = big.at(0, o, i + 1, j + 1);
  check_close(same4, want, 1e-4);
  // Dilation 2 with kernel 2: extent 3, symmetric again.
  auto samed = loom::conv2d(x, w4, std::nullopt, {1}, "same", {1, 2});
  CHECK(samed.sizes() == loom::IntArrayRef({1, 3, 7, 8}));
  auto valid = loom::conv2d(x, w3, std::nullopt, {1}, "valid");
  CHECK(valid.sizes() == loom::IntArrayRef({1, 3, 5, 6}));
  auto same1d = loom::conv1d(loom::randn({2, 5}), loom::randn({1, 2, 4}), std::nullopt, {1}, "same");
  CHECK(same1d.sizes() == loom::IntArrayRef({1, 5}));
  CHECK_THROWS_WITH(loom::conv2d(x, w3, std::nullopt, {2}, "same"),
                    Catch::Contains("conv2d: padding='same' is not supported for strided convolutions"));
  CHECK_THROWS_WITH(loom::conv2d(x, w3, std::nullopt, {1}, "same", {}),
                    Catch::Contains("conv2d: expected 'dilation' to have 1 or 2 elements, but got 0"));
  CHECK_THROWS_WITH(loom::conv2d(x, w3, std::nullopt, {1}, "full"),
                    Catch::Contains("conv2d: invalid padding string 'full'"));
}

TEST_CASE("conv_transpose2d matches the scatter definition", "[conv]") {
  struct T {
    int64_t n, c, h, w, og, kh, kw;
    conv_ref::Params p;
    bool bias;
  };
  const T cases[] = {
      {2, 3, 5, 5, 4, 3, 3, {}, true},
      {1, 4, 4, 6, 3, 3, 3, {2, 2, 1, 1, 1, 1, 1, 1, 1}, true},
      {2, 4, 5, 4, 2, 3, 2, {2, 1, 0, 1, 2, 1, 2, 1, 0}, false},
      {1, 6, 3, 3, 1, 4, 4, {3, 3, 1, 2, 1, 1, 3, 2, 0}, true},
  };
  for (DType t : {DType::Float32, DType::Float64, DType::BFloat16}) {
    const double tol = t == DType::BFloat16 ? 3e-2 : t == DType::Float32 ? 1e-4 : 1e-12;
    for (const T& k : cases) {
      CAPTURE(loom::name(t), k.c, k.og, k.p.sh, k.p.ph, k.p.oph, k.p.groups);
      Tensor x = loom::randn({k.n, k.c, k.h, k.w}).to(t);
      Tensor w = loom::randn({k.c, k.og, k.kh, k.kw}).to(t);
      std::optional<Tensor> b;
      if (k.bias) b = loom::randn({k.og * k.p.groups}).to(t);
      auto y = loom::conv_transpose2d(x, w, b, {k.p.sh, k.p.sw}, {k.p.ph, k.p.pw}, {k.p.oph, k.p.opw},
                                      k.p.groups, {k.p.dh, k.p.dw});
      check_close(y, conv_ref::conv_transpose2d(ref_of(x), ref_of(w), bias_of(b), k.p), tol);
    }
  }
  // Unbatched, and a hand-computed case: 1x1 input scattering the kernel.
  auto y = loom::conv_transpose2d(loom::full({1, 1, 1}, 2.0), loom::arange(1, 5, 1, DType::Float32).view({1, 1, 2, 2}));
  CHECK(y.to_vector<float>() == std::vector<float>{2, 4, 6, 8});
  CHECK(y.sizes() == loom::IntArrayRef({1, 2, 2}));
}

TEST_CASE("conv argument errors name the op, the argument and the sizes", "[conv]") {
  auto x = loom::ones({1, 4, 6, 6});
  auto w = loom::ones({2, 4, 3, 3});
  CHECK_THROWS_WITH(loom::conv2d(loom::ones({4, 6}), w),
                    Catch::Contains("conv2d: expected 3D (unbatched) or 4D (batched) input, but got input of size [4, 6]"));
  CHECK_THROWS_WITH(loom::conv2d(x, loom::ones({2, 4, 3})),
                    Catch::Contains("conv2d: expected weight to be 4-D, but got weight of size [2, 4, 3]"));
  CHECK_THROWS_WITH(loom::conv2d(loom::ones({1, 3, 6, 6}), w),
                    Catch::Contains("expected input [1, 3, 6, 6] to have 4 channels, but got 3 channels"));
  CHECK_THROWS_WITH(loom::conv2d(x, loom::ones({3, 2, 3, 3}), std::nullopt, {1}, {0}, {1}, 2),
                    Catch::Contains("conv2d: given groups=2, expected weight to be divisible by 2 at dimension 0"));
  CHECK_THROWS_WITH(loom::conv2d(x, loom::ones({4, 2, 3, 3}), std::nullopt, {1}, {0}, {1}, 3),
                    Catch::Contains("divisible by 3"));
  CHECK_THROWS_WITH(loom::conv2d(x, w, std::nullopt, {1}, {0}, {1}, 0),
                    Catch::Contains("conv2d: expected 'groups' to be positive, but got 0"));
  CHECK_THROWS_WITH(loom::conv2d(x, w, std::nullopt, {0, 1}),
                    Catch::Contains("conv2d: expected 'stride' to be positive, but got [0, 1]"));
  CHECK_THROWS_WITH(loom::conv2d(x, w, std::nullopt, {1}, {-1}),
                    Catch::Contains("conv2d: expected 'padding' to be non-negative"));
  CHECK_THROWS_WITH(loom::conv2d(x, w, std::nullopt, {1}, {0}, {0}),
                    Catch::Contains("conv2d: expected 'dilation' to be positive"));
  CHECK_THROWS_WITH(loom::conv2d(x, w, std::nullopt, {1, 2, 3}),
                    Catch::Contains("conv2d: expected 'stride' to have 1 or 2 elements, but got 3"));
  CHECK_THROWS_WITH(loom::conv2d(loom::ones({1, 4, 2, 2}), w),
                    Catch::Contains("conv2d: calculated padded input size per channel: (2 x 2)") &&
                        Catch::Contains("(3 x 3)"));
  CHECK_THROWS_WITH(loom::conv2d(x, w, loom::ones({3})),
                    Catch::Contains("conv2d: expected bias of size [2], but got [3]"));
  CHECK_THROWS_WITH(loom::conv2d(x, w.to(DType::Float64)),
                    Catch::Contains("conv2d: expected input and weight to have the same dtype, but got float32 and float64"));
  CHECK_THROWS_WITH(loom::conv2d(x, w, loom::ones({2}, DType::Float64)),
                    Catch::Contains("conv2d: expected bias to have the input's dtype float32, but got float64"));
  CHECK_THROWS_WITH(loom::conv2d(x.to(DType::Bool), w.to(DType::Bool)), Catch::Contains("conv2d: bool input"));
  CHECK_THROWS_WITH(loom::conv1d(x, loom::ones({2, 4, 3})),
                    Catch::Contains("conv1d: expected 2D (unbatched) or 3D (batched) input, but got input of size [1, 4, 6, 6]"));
  CHECK_THROWS_WITH(loom::conv1d(loom::ones({1, 4, 2}), loom::ones({2, 4, 3})),
                    Catch::Contains("conv1d: calculated padded input size per channel: (2)"));
  CHECK_THROWS_WITH(loom::conv_transpose2d(x, loom::ones({3, 2, 3, 3})),
                    Catch::Contains("conv_transpose2d: given transposed=1, weight of size [3, 2, 3, 3], expected input [1, 4, 6, 6] to have 3 channels, but got 4 channels"));
  CHECK_THROWS_WITH(loom::conv_transpose2d(x, w, std::nullopt, {2}, {0}, {2}),
                    Catch::Contains("conv_transpose2d: output_padding must be smaller than either stride or dilation"));
  CHECK_THROWS_WITH(loom::conv_transpose2d(loom::ones({1, 4, 1, 1}), loom::ones({4, 1, 1, 1}), std::nullopt, {1}, {1}),
                    Catch::Contains("conv_transpose2d: given input size (1 x 1), the calculated output size (-1 x -1) is too small"));
  CHECK_THROWS_WITH(loom::conv_transpose2d(x, loom::ones({4, 2, 3, 3}), loom::ones({3})),
                    Catch::Contains("conv_transpose2d: expected bias of size [2], but got [3]"));
}

TEST_CASE("conv2d reads broadcast (stride-0) inputs and runs on sim through the fallback", "[conv]") {
  // An expanded input: every row of H the same memory.
  Tensor base = loom::randn({1, 3, 1, 8});
  Tensor x = base.expand({2, 3, 6, 8});
  Tensor w = loom::randn({4, 3, 3, 3});
  conv_ref::Params p{1, 1, 1, 1, 1, 1, 1};
  check_close(loom::conv2d(x, w, std::nullopt, {1}, {1}), conv_ref::conv2d(ref_of(x), ref_of(w), {}, p), 1e-4);

  loom::Device sim("sim");
  Tensor xs = loom::randn({1, 2, 5, 5});
  Tensor ws = loom::randn({3, 2, 3, 3});
  auto y = loom::conv2d(xs.to(sim), ws.to(sim), std::nullopt, {2}, {1});
  CHECK(y.device() == sim);
  check_close(y.cpu(), conv_ref::conv2d(ref_of(xs), ref_of(ws), {}, {2, 2, 1, 1, 1, 1, 1}), 1e-4);
  auto [v, i] = loom::max_pool2d_with_indices(xs.to(sim), {2});
  CHECK(v.device() == sim);
  CHECK(i.device() == sim);
  CHECK(i.cpu().to_vector<int64_t>() == std::get<1>(loom::max_pool2d_with_indices(xs, {2})).to_vector<int64_t>());
  CHECK(loom::fallback_count("conv2d", "sim") >= 1);
}
