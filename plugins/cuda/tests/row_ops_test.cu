// Host tests of the CUDA plugin's row math and GEMM planning: the
// functors of kernels/row_ops.cuh (online softmax, Welford) against
// two-pass references in double, split and merged in several orders as
// the warp and block reductions merge them; and kernels/gemm_plan.hpp
// run through a host model of cuBLAS's column-major GEMM (its documented
// indexing and leading-dimension rules) against a naive product over
// loom's strides. Built with nvcc as a host program: no GPU needed.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/gemm_plan.hpp"
#include "kernels/row_ops.cuh"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace loom::cuda;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- softmax ----------------------------------------------------------------------------------

// The CPU plugin's recipe in double: max, then Σ exp(x - max), then divide.
std::vector<double> ref_softmax(const std::vector<double>& x, bool log) {
  double m = -kInf;
  for (double v : x) m = v > m ? v : m;
  double s = 0;
  for (double v : x) s += std::exp(v - m);
  std::vector<double> y;
  for (double v : x) y.push_back(log ? (v - m) - std::log(s) : std::exp(v - m) / s);
  return y;
}

// The row folded in `parts` interleaved partials (as lanes stride a row),
// merged left to right, as a balanced tree, or right to left.
template <class C, class State>
State fold(const std::vector<double>& x, int parts, int order) {
  std::vector<State> p(static_cast<size_t>(parts));
  for (size_t i = 0; i < x.size(); ++i) p[i % parts].add(static_cast<C>(x[i]));
  if (order == 0) {
    for (int i = 1; i < parts; ++i) p[0].combine(p[i]);
  } else if (order == 1) {
    for (int w = 1; w < parts; w *= 2)
      for (int i = 0; i + w < parts; i += 2 * w) p[i].combine(p[i + w]);
  } else {
    for (int i = parts - 2; i >= 0; --i) {
      p[i].combine(p[i + 1]);
    }
  }
  return p[0];
}

template <class C>
void check_softmax_row(const std::vector<double>& x, double tol) {
  for (bool log : {false, true}) {
    const std::vector<double> want = ref_softmax(x, log);
    for (int parts : {1, 3, 32}) {
      for (int order = 0; order < 3; ++order) {
        const auto st = fold<C, rows::OnlineSoftmax<C>>(x, parts, order);
        for (size_t i = 0; i < x.size(); ++i) {
          const C v = static_cast<C>(x[i]);
          const double got = log ? st.log_softmax(v) : st.softmax(v);
          INFO("log " << log << " parts " << parts << " order " << order << " i " << i << " x " << x[i]);
          if (std::isnan(want[i])) {
            CHECK(std::isnan(got));
          } else if (std::isinf(want[i])) {
            CHECK(got == want[i]);
          } else {
            CHECK(got == Approx(want[i]).epsilon(tol).margin(tol));
          }
        }
      }
    }
  }
}

TEST_CASE("online softmax matches max-then-sum on ordinary rows", "[row_ops]") {
  std::mt19937 rng(7);
  std::normal_distribution<double> d(0.0, 3.0);
  for (int n : {1, 2, 5, 31, 64, 200}) {
    std::vector<double> x(static_cast<size_t>(n));
    for (double& v : x) v = d(rng);
    check_softmax_row<float>(x, 2e-6);
    check_softmax_row<double>(x, 1e-13);
  }
}

TEST_CASE("online softmax is max-shifted: huge inputs do not overflow", "[row_ops]") {
  const std::vector<double> x = {1e4, 1e4 - 1, -1e4, 3e4, 3e4};
  check_softmax_row<float>(x, 1e-6);
  check_softmax_row<double>(x, 1e-13);
  const auto st = fold<float, rows::OnlineSoftmax<float>>(x, 3, 1);
  CHECK(st.softmax(3e4f) == Approx(0.5));
}

TEST_CASE("online softmax edge rows: NaN, -inf, +inf", "[row_ops]") {
  // -inf entries give exactly 0 (log: -inf) when the row has a finite max.
  check_softmax_row<float>({-kInf, 0.0, -kInf, 1.0}, 1e-6);
  const auto st = fold<float, rows::OnlineSoftmax<float>>({-kInf, 0.0, -kInf, 1.0}, 32, 1);
  CHECK(st.softmax(-INFINITY) == 0.0f);
  CHECK(st.log_softmax(-INFINITY) == -INFINITY);
  // A row with a NaN is NaN everywhere, wherever the NaN sits.
  check_softmax_row<float>({kNaN, 1.0, 2.0}, 1e-6);
  check_softmax_row<float>({1.0, 2.0, kNaN}, 1e-6);
  check_softmax_row<double>({-kInf, kNaN}, 1e-13);
  // A row of -inf is 0/0 = NaN (not 0, not 1/n).
  check_softmax_row<float>({-kInf, -kInf, -kInf}, 1e-6);
  const auto all_neg = fold<float, rows::OnlineSoftmax<float>>({-kInf, -kInf}, 32, 0);
  CHECK(all_neg.s == 0.0f);
  CHECK(std::isnan(all_neg.softmax(-INFINITY)));
  // +inf: exp(inf - inf) is NaN on the CPU too.
  check_softmax_row<float>({kInf, 1.0}, 1e-6);
}

TEST_CASE("empty partial states merge as the identity", "[row_ops]") {
  rows::OnlineSoftmax<float> a, b;
  a.combine(b);
  CHECK(a.m == -INFINITY);
  CHECK(a.s == 0.0f);  // not NaN from -inf - -inf
  b.add(2.0f);
  a.combine(b);
  CHECK(a.m == 2.0f);
  CHECK(a.s == 1.0f);
  rows::OnlineSoftmax<float> c;
  a.combine(c);
  CHECK(a.s == 1.0f);
}

// ---- Welford ----------------------------------------------------------------------------------

void ref_stats(const std::vector<double>& x, double& mean, double& var) {
  double s = 0;
  for (double v : x) s += v;
  mean = s / static_cast<double>(x.size());
  double q = 0;
  for (double v : x) q += (v - mean) * (v - mean);
  var = q / static_cast<double>(x.size());
}

template <class C>
void check_welford(const std::vector<double>& x, double tol) {
  double mean, var;
  ref_stats(x, mean, var);
  for (int parts : {1, 4, 32, 256}) {
    for (int order = 0; order < 3; ++order) {
      const auto st = fold<C, rows::Welford<C>>(x, parts, order);
      INFO("parts " << parts << " order " << order);
      CHECK(st.n == static_cast<int64_t>(x.size()));
      CHECK(st.mean == Approx(mean).epsilon(tol).margin(tol * (std::abs(mean) + 1)));
      CHECK(st.m2 / static_cast<C>(st.n) == Approx(var).epsilon(tol).margin(tol));
      const double eps = 1e-5;
      CHECK(st.rstd(static_cast<C>(eps)) == Approx(1.0 / std::sqrt(var + eps)).epsilon(tol * 10));
    }
  }
}

TEST_CASE("Welford mean and variance match two passes in double", "[row_ops]") {
  std::mt19937 rng(11);
  std::normal_distribution<double> d(0.5, 2.0);
  for (int n : {1, 2, 7, 100, 4096}) {
    std::vector<double> x(static_cast<size_t>(n));
    for (double& v : x) v = d(rng);
    check_welford<float>(x, 2e-5);
    check_welford<double>(x, 1e-12);
  }
}

TEST_CASE("Welford keeps the variance of a large-offset row (no E[x^2] - E[x]^2 cancellation)", "[row_ops]") {
  std::vector<double> x;
  for (int i = 0; i < 1000; ++i) x.push_back(1e4 + (i % 2 ? 0.25 : -0.25));
  check_welford<float>(x, 1e-3);
  const auto st = fold<float, rows::Welford<float>>(x, 32, 1);
  CHECK(st.m2 / 1000.0f == Approx(0.0625).epsilon(1e-3));
  // A constant row has variance exactly 0: rstd is 1/sqrt(eps).
  const auto c = fold<float, rows::Welford<float>>(std::vector<double>(77, 3.0), 32, 1);
  CHECK(c.m2 == 0.0f);
  CHECK(c.mean == 3.0f);
}

TEST_CASE("Welford merges empty partials as the identity", "[row_ops]") {
  rows::Welford<double> a, b;
  a.combine(b);
  CHECK(a.n == 0);
  b.add(4.0);
  a.combine(b);
  CHECK(a.n == 1);
  CHECK(a.mean == 4.0);
  CHECK(a.m2 == 0.0);
  a.combine(rows::Welford<double>{});
  CHECK(a.mean == 4.0);
}

// ---- GEMM plan --------------------------------------------------------------------------------

// cuBLAS's column-major GEMM as documented, with its argument checks:
// C[i + j ldc] = Σ_l op(A)(i, l) op(B)(l, j).
bool blas_gemm(const gemm::Plan& p, const double* A, const double* B, double* C) {
  const auto at = [](const double* X, bool t, int64_t ld, int64_t r, int64_t c) {
    return t ? X[c + r * ld] : X[r + c * ld];
  };
  if (p.first.ld < std::max<int64_t>(1, p.first.transpose ? p.k : p.m)) return false;
  if (p.second.ld < std::max<int64_t>(1, p.second.transpose ? p.n : p.k)) return false;
  if (p.ldc < std::max<int64_t>(1, p.m)) return false;
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < p.k; ++l)
        s += at(A, p.first.transpose, p.first.ld, i, l) * at(B, p.second.transpose, p.second.ld, l, j);
      C[i + j * p.ldc] = s;
    }
  return true;
}

// A matrix stored in a buffer with the given element strides, filled with
// varied values (cells the layout never names hold NaN, so reading a wrong
// cell shows).
struct Stored {
  gemm::Matrix m;
  std::vector<double> buf;

  Stored(int64_t rows, int64_t cols, int64_t rs, int64_t cs, double seed) : m{rows, cols, rs, cs} {
    int64_t span = 1;
    if (rows > 0 && cols > 0) span += (rows - 1) * rs + (cols - 1) * cs;
    buf.assign(static_cast<size_t>(span), kNaN);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) buf[r * rs + c * cs] = seed + static_cast<double>(r * 13 + c * 5 + (r * c) % 3) / 8;
  }
  double at(int64_t r, int64_t c) const { return buf[r * m.row_stride + c * m.col_stride]; }
};

// Plans and runs a x b into c through the model; false when the plan asks
// for a copy (a_ok / b_ok) or declines (c_ok).
bool run_planned(const Stored& a, const Stored& b, Stored& c, gemm::Plan* out = nullptr) {
  const gemm::Plan p = gemm::plan(a.m, b.m, c.m);
  if (out) *out = p;
  if (!p.a_ok || !p.b_ok || !p.c_ok) return false;
  const double* first = p.swapped ? b.buf.data() : a.buf.data();
  const double* second = p.swapped ? a.buf.data() : b.buf.data();
  REQUIRE(blas_gemm(p, first, second, c.buf.data()));
  return true;
}

void check_product(const Stored& a, const Stored& b, const Stored& c) {
  for (int64_t i = 0; i < c.m.rows; ++i)
    for (int64_t j = 0; j < c.m.cols; ++j) {
      double s = 0;
      for (int64_t l = 0; l < a.m.cols; ++l) s += a.at(i, l) * b.at(l, j);
      INFO("C[" << i << ", " << j << "]");
      CHECK(c.at(i, j) == Approx(s));
    }
}

// (row stride, col stride) of a [rows, cols] matrix in each layout.
enum class Layout { RowMajor, ColMajor, PaddedRow, PaddedCol };
void strides_of(Layout l, int64_t rows, int64_t cols, int64_t& rs, int64_t& cs) {
  switch (l) {
    case Layout::RowMajor: rs = cols; cs = 1; break;
    case Layout::ColMajor: rs = 1; cs = rows; break;
    case Layout::PaddedRow: rs = cols + 3; cs = 1; break;  // a column slice of a wider matrix
    case Layout::PaddedCol: rs = 1; cs = rows + 2; break;
  }
}

TEST_CASE("GEMM plan: every unit-stride layout of A, B and C runs in place and multiplies right", "[gemm_plan]") {
  const Layout all[] = {Layout::RowMajor, Layout::ColMajor, Layout::PaddedRow, Layout::PaddedCol};
  const int64_t sizes[][3] = {{3, 4, 5}, {1, 4, 5}, {3, 1, 5}, {3, 4, 1}, {1, 1, 6}, {6, 1, 1}, {2, 3, 2}};
  for (const auto& s : sizes) {
    const int64_t M = s[0], K = s[1], N = s[2];
    for (Layout la : all)
      for (Layout lb : all)
        for (Layout lc : all) {
          int64_t ars, acs, brs, bcs, crs, ccs;
          strides_of(la, M, K, ars, acs);
          strides_of(lb, K, N, brs, bcs);
          strides_of(lc, M, N, crs, ccs);
          const Stored a(M, K, ars, acs, 1), b(K, N, brs, bcs, -2);
          Stored c(M, N, crs, ccs, 0);
          INFO("M K N " << M << " " << K << " " << N << " layouts " << int(la) << int(lb) << int(lc));
          gemm::Plan p;
          REQUIRE(run_planned(a, b, c, &p));
          check_product(a, b, c);
        }
  }
}

TEST_CASE("GEMM plan: a contiguous row-major product is the classic swapped call", "[gemm_plan]") {
  const gemm::Plan p = gemm::plan({4, 3, 3, 1}, {3, 5, 5, 1}, {4, 5, 5, 1});
  CHECK(p.swapped);
  CHECK((p.a_ok && p.b_ok && p.c_ok));
  CHECK((p.m == 5 && p.n == 4 && p.k == 3));
  CHECK((!p.first.transpose && p.first.ld == 5));    // B read as B^T, ld N
  CHECK((!p.second.transpose && p.second.ld == 3));  // A read as A^T, ld K
  CHECK(p.ldc == 5);
  // A transposed view (A = X.t() with X [3, 4] contiguous) is read with op T.
  const gemm::Plan t = gemm::plan({4, 3, 1, 4}, {3, 5, 5, 1}, {4, 5, 5, 1});
  CHECK((t.swapped && t.second.transpose && t.second.ld == 4));
}

TEST_CASE("GEMM plan: operands without a usable unit stride ask for a dense copy", "[gemm_plan]") {
  // A broadcast row (stride 0 between rows), both strides non-unit, and
  // overlapping rows: none is a cuBLAS operand.
  const gemm::Matrix c{4, 5, 5, 1};
  const gemm::Matrix b{3, 5, 5, 1};
  for (const gemm::Matrix a : {gemm::Matrix{4, 3, 0, 1}, gemm::Matrix{4, 3, 6, 2}, gemm::Matrix{4, 3, 2, 1}}) {
    const gemm::Plan p = gemm::plan(a, b, c);
    CHECK(p.c_ok);
    CHECK(!p.a_ok);
    CHECK(p.b_ok);
  }
  const gemm::Plan pb = gemm::plan({4, 3, 3, 1}, {3, 5, 1, 0}, c);
  CHECK((pb.a_ok && !pb.b_ok));
  // A dense copy ([rows, cols] row-major) always plans.
  const gemm::Plan dense = gemm::plan({4, 3, 3, 1}, {3, 5, 5, 1}, c);
  CHECK((dense.a_ok && dense.b_ok && dense.c_ok));
}

TEST_CASE("GEMM plan: an output without a unit stride is declined", "[gemm_plan]") {
  CHECK(!gemm::plan({4, 3, 3, 1}, {3, 5, 5, 1}, {4, 5, 10, 2}).c_ok);
  CHECK(!gemm::plan({4, 3, 3, 1}, {3, 5, 5, 1}, {4, 5, 0, 1}).c_ok);  // overlapping rows
}

TEST_CASE("GEMM plan: K == 0 gives valid leading dimensions whatever the strides", "[gemm_plan]") {
  const gemm::Plan p = gemm::plan({4, 0, 0, 1}, {0, 5, 5, 1}, {4, 5, 5, 1});
  CHECK((p.a_ok && p.b_ok && p.c_ok));
  CHECK(p.k == 0);
  CHECK(p.first.ld >= std::max<int64_t>(1, p.m));
  CHECK(p.second.ld >= 1);
}

TEST_CASE("batch dims: size-1 dropped, contiguous neighbours merged, broadcast kept", "[gemm_plan]") {
  using gemm::kA, gemm::kB, gemm::kC;
  gemm::Batches b;
  SECTION("contiguous [2, 3] batches merge into 6") {
    const int64_t c_shape[] = {2, 3}, a_shape[] = {2, 3}, b_shape[] = {2, 3};
    const int64_t a_st[] = {3 * 12, 12}, b_st[] = {3 * 20, 20}, c_st[] = {3 * 15, 15};
    gemm::simplify_batches(2, c_shape, a_shape, a_st, b_shape, b_st, c_st, b);
    CHECK(b.ndim == 1);
    CHECK(b.shape[0] == 6);
    CHECK((b.strides[kA][0] == 12 && b.strides[kB][0] == 20 && b.strides[kC][0] == 15));
  }
  SECTION("a size-1 operand dim is broadcast (stride 0) whatever its stride; size-1 dims vanish") {
    const int64_t c_shape[] = {1, 4, 1}, a_shape[] = {1, 4, 1}, b_shape[] = {1, 1, 1};
    const int64_t a_st[] = {99, 12, 99}, b_st[] = {7, 7, 7}, c_st[] = {60, 15, 15};
    gemm::simplify_batches(3, c_shape, a_shape, a_st, b_shape, b_st, c_st, b);
    CHECK(b.ndim == 1);
    CHECK(b.shape[0] == 4);
    CHECK((b.strides[kA][0] == 12 && b.strides[kB][0] == 0 && b.strides[kC][0] == 15));
    CHECK(b.numel == 4);
  }
  SECTION("dims that step unevenly stay apart (outer loop on the host)") {
    const int64_t c_shape[] = {2, 3}, a_shape[] = {2, 3}, b_shape[] = {1, 3};
    const int64_t a_st[] = {12, 36}, b_st[] = {5, 20}, c_st[] = {45, 15};  // a permuted batch
    gemm::simplify_batches(2, c_shape, a_shape, a_st, b_shape, b_st, c_st, b);
    CHECK(b.ndim == 2);
    CHECK(b.numel == 6);
    CHECK((b.strides[kA][0] == 12 && b.strides[kA][1] == 36 && b.strides[kB][0] == 0 && b.strides[kB][1] == 20));
  }
  SECTION("a batch dim of size 0 means no work") {
    const int64_t c_shape[] = {3, 0}, a_shape[] = {3, 0}, b_shape[] = {3, 0};
    const int64_t st[] = {1, 1};
    gemm::simplify_batches(2, c_shape, a_shape, st, b_shape, st, st, b);
    CHECK(b.numel == 0);
  }
  SECTION("no batch dims: one product of batch size 1") {
    gemm::simplify_batches(0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, b);
    CHECK(b.ndim == 1);
    CHECK(b.shape[0] == 1);
    CHECK(b.numel == 1);
  }
}

}  // namespace
