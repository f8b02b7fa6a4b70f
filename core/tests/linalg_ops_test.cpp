// mm, bmm, dot, outer, addmm, baddbmm, linear against naive loops, their
// dtype and shape rules, and the composites on the sim device.
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <cmath>

using loom::DType;
using loom::Tensor;

namespace {

// C[b, i, j] = sum_k A[b, i, k] * B[b, k, j] over contiguous doubles.
std::vector<double> naive_bmm(const std::vector<double>& a, const std::vector<double>& b,
                              int64_t batch, int64_t n, int64_t k, int64_t m) {
  std::vector<double> c(batch * n * m, 0.0);
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        for (int64_t p = 0; p < k; ++p)
          c[(z * n + i) * m + j] += a[(z * n + i) * k + p] * b[(z * k + p) * m + j];
  return c;
}

std::vector<double> vals(const Tensor& t) { return t.contiguous().to_vector<double>(); }

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(tol));
}

}  // namespace

TEST_CASE("mm and bmm match a naive loop for every dtype and layout", "[linalg]") {
  loom::manual_seed(7);
  for (DType t : {DType::Float32, DType::Float64, DType::BFloat16, DType::Int64, DType::Int32}) {
    CAPTURE(loom::name(t));
    const double tol = t == DType::BFloat16 ? 0.5 : 1e-4;
    auto a = loom::randint(-4, 5, {5, 7}).to(t);
    auto b = loom::randint(-4, 5, {7, 3}).to(t);
    check_close(vals(loom::mm(a, b)), naive_bmm(vals(a), vals(b), 1, 5, 7, 3), tol);
    // Transposed operands read through strides.
    auto at = loom::randint(-4, 5, {7, 5}).to(t).t();
    check_close(vals(loom::mm(at, b)), naive_bmm(vals(at), vals(b), 1, 5, 7, 3), tol);
    auto x = loom::randint(-4, 5, {4, 5, 6}).to(t);
    auto y = loom::randint(-4, 5, {4, 6, 2}).to(t);
    auto c = loom::bmm(x, y);
    CHECK(c.sizes() == loom::IntArrayRef({4, 5, 2}));
    check_close(vals(c), naive_bmm(vals(x), vals(y), 4, 5, 6, 2), tol);
  }
  // Big enough for the oneDNN path.
  auto a = loom::randn({64, 96});
  auto b = loom::randn({96, 80});
  check_close(vals(loom::mm(a, b)), naive_bmm(vals(a), vals(b), 1, 64, 96, 80), 1e-3);
  // Empty inner dimension: zeros.
  CHECK(vals(loom::mm(loom::ones({2, 0}), loom::ones({0, 3}))) == std::vector<double>(6, 0.0));
}

TEST_CASE("dot and outer", "[linalg]") {
  auto a = loom::from_vector<float>({1, 2, 3}, {3});
  auto b = loom::from_vector<float>({4, -5, 6}, {3});
  auto d = loom::dot(a, b);
  CHECK(d.dim() == 0);
  CHECK(d.item<float>() == 12.0f);
  CHECK(loom::dot(loom::arange(4), loom::arange(4)).item<int64_t>() == 14);
  // Strided vectors.
  auto m = loom::arange(6, DType::Float32).view({3, 2});
  CHECK(loom::dot(m.select(1, 0), m.select(1, 1)).item<float>() == 0 * 1 + 2 * 3 + 4 * 5);

  auto o = loom::outer(a, loom::from_vector<float>({1, -1}, {2}));
  CHECK(o.sizes() == loom::IntArrayRef({3, 2}));
  CHECK(vals(o) == std::vector<double>{1, -1, 2, -2, 3, -3});
  auto oi = loom::outer(loom::arange(3, DType::Int32), a);  // promotes
  CHECK(oi.dtype() == DType::Float32);
  CHECK(vals(oi) == std::vector<double>{0, 0, 0, 1, 2, 3, 2, 4, 6});
}

TEST_CASE("addmm and baddbmm: beta, alpha, broadcast self, beta = 0 ignores NaN", "[linalg]") {
  auto m1 = loom::randint(-3, 4, {2, 3}).to(DType::Float32);
  auto m2 = loom::randint(-3, 4, {3, 4}).to(DType::Float32);
  auto self = loom::from_vector<float>({1, 2, 3, 4}, {4});
  auto prod = naive_bmm(vals(m1), vals(m2), 1, 2, 3, 4);
  std::vector<double> want(8);
  for (int i = 0; i < 8; ++i) want[i] = 0.5 * (i % 4 + 1) + 2.0 * prod[i];
  check_close(vals(loom::addmm(self, m1, m2, 0.5, 2)), want, 1e-5);

  auto nan = loom::full({2, 4}, NAN);
  check_close(vals(loom::addmm(nan, m1, m2, 0, 1)), prod, 1e-5);
  // Integer tensors truncate the coefficients, as PyTorch: beta 0.5 -> 0.
  auto im1 = loom::ones({2, 3}, DType::Int64);
  auto r = loom::addmm(loom::ones({2, 3}, DType::Int64), im1, loom::ones({3, 3}, DType::Int64), 0.5);
  CHECK(r.dtype() == DType::Int64);
  CHECK(vals(r) == std::vector<double>(6, 3));

  auto b1 = loom::randint(-3, 4, {3, 2, 5}).to(DType::Float64);
  auto b2 = loom::randint(-3, 4, {3, 5, 2}).to(DType::Float64);
  auto bs = loom::from_vector<double>({10, 20}, {2});
  auto bp = naive_bmm(vals(b1), vals(b2), 3, 2, 5, 2);
  for (size_t i = 0; i < bp.size(); ++i) bp[i] = (i % 2 ? 20 : 10) - bp[i];
  check_close(vals(loom::baddbmm(bs, b1, b2, 1, -1)), bp, 1e-9);
}

TEST_CASE("linear: 2-D and 1-D weight, optional bias, batched input", "[linalg]") {
  auto x = loom::randn({2, 3, 4});
  auto w = loom::randn({5, 4});
  auto bias = loom::randn({5});
  auto y = loom::linear(x, w, bias);
  CHECK(y.sizes() == loom::IntArrayRef({2, 3, 5}));
  auto want = naive_bmm(vals(x), vals(w.t()), 1, 6, 4, 5);
  auto bv = vals(bias);
  for (size_t i = 0; i < want.size(); ++i) want[i] += bv[i % 5];
  check_close(vals(y), want, 1e-4);
  CHECK(loom::linear(x, w).sizes() == loom::IntArrayRef({2, 3, 5}));
  auto v = loom::linear(loom::ones({3, 4}), loom::ones({4}));  // 1-D weight
  CHECK(v.sizes() == loom::IntArrayRef({3}));
  CHECK(vals(v) == std::vector<double>{4, 4, 4});
  CHECK(loom::linear(loom::ones({4}), w, bias).sizes() == loom::IntArrayRef({5}));
}

TEST_CASE("linear algebra errors name the op, the argument and the shapes", "[linalg]") {
  auto m = loom::ones({2, 3});
  CHECK_THROWS_WITH(loom::mm(m, loom::ones({4, 2})),
                    Catch::Contains("mm: shapes cannot be multiplied ([2, 3] and [4, 2])"));
  CHECK_THROWS_WITH(loom::mm(loom::ones({3}), m), Catch::Contains("mm: expected 'mat1' to be a 2-D"));
  CHECK_THROWS_WITH(loom::mm(m, loom::ones({3, 2}, DType::Float64)),
                    Catch::Contains("mm: expected 'mat2' to have dtype float32"));
  CHECK_THROWS_WITH(loom::bmm(loom::ones({2, 2, 3}), loom::ones({3, 3, 2})),
                    Catch::Contains("bmm: batch sizes differ"));
  CHECK_THROWS_WITH(loom::bmm(m, loom::ones({3, 3, 2})),
                    Catch::Contains("bmm: expected 'batch1' to be a 3-D tensor"));
  CHECK_THROWS_WITH(loom::dot(loom::ones({3}), loom::ones({4})),
                    Catch::Contains("dot: expected both vectors to have the same number of elements"));
  CHECK_THROWS_WITH(loom::dot(loom::ones({3}), loom::ones({3}, DType::Int64)),
                    Catch::Contains("dot: expected 'tensor' to have dtype float32"));
  CHECK_THROWS_WITH(loom::outer(loom::ones({3}), m), Catch::Contains("outer: expected 'vec2' to be a 1-D"));
  CHECK_THROWS_WITH(loom::addmm(loom::ones({4}), m, loom::ones({3, 3})),
                    Catch::Contains("addmm"));
  CHECK_THROWS_WITH(loom::mm(loom::ones({2, 2}, DType::Bool), loom::ones({2, 2}, DType::Bool)),
                    Catch::Contains("bool"));
  CHECK_THROWS_WITH(loom::linear(m, loom::ones({4, 5})),
                    Catch::Contains("linear: 'input' has 3 features"));
  CHECK_THROWS_WITH(loom::linear(m, loom::ones({4, 3}), loom::ones({5})),
                    Catch::Contains("linear"));
}

TEST_CASE("linear algebra composites run on a device with only add and mul", "[linalg][sim]") {
  const loom::Device sim("sim:0");
  auto a = loom::from_vector<float>({1, 2, 3, 4}, {2, 2});
  auto w = loom::from_vector<float>({1, 0, 0, 1}, {2, 2});
  auto bias = loom::from_vector<float>({10, 20}, {2});
  auto y = loom::linear(a.to(sim), w.to(sim), bias.to(sim));
  CHECK(y.device() == sim);
  CHECK(vals(y.to(loom::cpu_device())) == std::vector<double>{11, 22, 13, 24});
  auto o = loom::outer(bias.to(sim), bias.to(sim));
  CHECK(vals(o.to(loom::cpu_device())) == std::vector<double>{100, 200, 200, 400});
  auto d = loom::addmm(bias.to(sim), a.to(sim), w.to(sim), 1, 2);
  CHECK(vals(d.to(loom::cpu_device())) == std::vector<double>{12, 24, 16, 28});
}
