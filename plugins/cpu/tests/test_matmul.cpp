// matmul against a naive loop: several shapes and dtypes (oneDNN and the
// blocked loop), transposed operands, batches with stride-0 broadcast,
// non-contiguous output, K = 0, and repeated calls through the cache.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <array>
#include <cmath>

using namespace loom_test;

namespace {

// c = a x b over the last two dims, all [B..., *, *] of one ndim.
void check_matmul(const Tensor& a, const Tensor& b, const Tensor& c) {
  const int32_t dt = c.dtype;
  const size_t nd = c.shape.size();
  const int64_t K = a.shape[nd - 1];
  std::vector<long double> want, mag;
  for_each_index(c.shape, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> ia = idx, ib = idx;
    long double s = 0, m = 0;
    uint64_t si = 0;
    for (int64_t k = 0; k < K; ++k) {
      ia[nd - 1] = k;
      ib[nd - 2] = k;
      const long double x = get(a, ia), y = get(b, ib);
      s += x * y;
      m += std::fabs(x * y);
      si += static_cast<uint64_t>(static_cast<int64_t>(x)) * static_cast<uint64_t>(static_cast<int64_t>(y));
    }
    if (!is_floating(dt)) {
      switch (dt) {
        case LOOM_DTYPE_UINT8: s = static_cast<uint8_t>(si); break;
        case LOOM_DTYPE_INT8: s = static_cast<int8_t>(si); break;
        case LOOM_DTYPE_INT16: s = static_cast<int16_t>(si); break;
        case LOOM_DTYPE_INT32: s = static_cast<int32_t>(si); break;
        default: s = static_cast<int64_t>(si); break;
      }
    }
    want.push_back(s);
    mag.push_back(m);
  });
  fill_pattern(c, 77);  // garbage to overwrite
  run("matmul", {a.desc(), b.desc()}, {c.desc()});
  size_t i = 0;
  for_each_index(c.shape, [&](const std::vector<int64_t>& idx) {
    const long double got = get(c, idx), w = want[i], m = mag[i++];
    bool ok;
    if (!is_floating(dt)) {
      ok = got == w;
    } else {
      const double acc_eps = dt == LOOM_DTYPE_FLOAT64 ? 2.3e-16 : 1.2e-7;
      ok = std::fabs(got - w) <= eps_of(dt) * std::fabs(w) + acc_eps * static_cast<double>(K) * m + 1e-30L;
    }
    if (!ok)
      FAIL_CHECK("matmul " << loom::plugin::dtype_name(dt) << " element " << i - 1 << ": got "
                           << static_cast<double>(got) << ", want " << static_cast<double>(w));
  });
}

const std::vector<int32_t> kMatmulDtypes{LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_FLOAT16,
                                         LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_INT32,   LOOM_DTYPE_INT8,
                                         LOOM_DTYPE_INT64,   LOOM_DTYPE_UINT8,   LOOM_DTYPE_INT16};

}  // namespace

TEST_CASE("matmul 2-D shapes and transposed operands, every dtype", "[matmul]") {
  const std::vector<std::array<int64_t, 3>> shapes{{1, 1, 1}, {3, 4, 5}, {17, 33, 9}, {64, 128, 70}, {1, 300, 1}};
  for (int32_t dt : kMatmulDtypes) {
    for (const auto& [M, K, N] : shapes) {
      INFO(loom::plugin::dtype_name(dt) << " M=" << M << " K=" << K << " N=" << N);
      Tensor a = make(dt, {M, K}), b = make(dt, {K, N}), c = make(dt, {M, N});
      fill_pattern(a, 1);
      fill_pattern(b, 2);
      check_matmul(a, b, c);
      Tensor at0 = make(dt, {K, M}), bt0 = make(dt, {N, K});
      fill_pattern(at0, 3);
      fill_pattern(bt0, 4);
      const Tensor at = transpose(at0, 0, 1), bt = transpose(bt0, 0, 1);
      check_matmul(at, b, c);
      check_matmul(a, bt, c);
      check_matmul(at, bt, c);
      // Output written through a transposed view.
      Tensor ct0 = make(dt, {N, M});
      check_matmul(a, b, transpose(ct0, 0, 1));
    }
  }
}

TEST_CASE("matmul large blocked shapes", "[matmul]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_INT32}) {
    INFO(loom::plugin::dtype_name(dt));
    Tensor a = make(dt, {130, 257}), b = make(dt, {257, 260}), c = make(dt, {130, 260});
    fill_pattern(a, 5);
    fill_pattern(b, 6);
    check_matmul(a, b, c);
  }
}

TEST_CASE("matmul batches, including stride-0 broadcast", "[matmul]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16,
                     LOOM_DTYPE_INT64}) {
    INFO(loom::plugin::dtype_name(dt));
    for (const auto& [M, K, N] : std::vector<std::array<int64_t, 3>>{{5, 6, 7}, {20, 40, 24}}) {
      Tensor a = make(dt, {2, 3, M, K}), b = make(dt, {2, 3, K, N}), c = make(dt, {2, 3, M, N});
      fill_pattern(a, 7);
      fill_pattern(b, 8);
      check_matmul(a, b, c);
      // a broadcast over dim 1, b over dim 0.
      Tensor a1 = make(dt, {2, 1, M, K}), b1 = make(dt, {1, 3, K, N});
      fill_pattern(a1, 9);
      fill_pattern(b1, 10);
      const Tensor ab = expand(a1, {2, 3, M, K}), bb = expand(b1, {2, 3, K, N});
      check_matmul(ab, bb, c);
      check_matmul(a, bb, c);
      // Both broadcast over every batch dim (a plain 2-D matmul repeated).
      Tensor a2 = make(dt, {1, 1, M, K});
      fill_pattern(a2, 11);
      check_matmul(expand(a2, {2, 3, M, K}), bb, c);
      // Transposed operands inside batches.
      Tensor bt0 = make(dt, {2, 3, N, K});
      fill_pattern(bt0, 12);
      check_matmul(a, transpose(bt0, 2, 3), c);
    }
  }
}

TEST_CASE("matmul degenerate sizes", "[matmul]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT32, LOOM_DTYPE_FLOAT16}) {
    Tensor a = make(dt, {4, 0}), b = make(dt, {0, 3}), c = make(dt, {4, 3});
    check_matmul(a, b, c);  // K = 0: zeros
    Tensor a0 = make(dt, {0, 5}), b0 = make(dt, {5, 3}), c0 = make(dt, {0, 3});
    check_matmul(a0, b0, c0);
    Tensor ae = make(dt, {0, 2, 5}), be = make(dt, {0, 5, 3}), ce = make(dt, {0, 2, 3});
    check_matmul(ae, be, ce);
  }
}

TEST_CASE("matmul reuses cached primitives with new data", "[matmul]") {
  for (int rep = 0; rep < 3; ++rep) {
    Tensor a = make(LOOM_DTYPE_FLOAT32, {32, 48}), b = make(LOOM_DTYPE_FLOAT32, {48, 40}),
           c = make(LOOM_DTYPE_FLOAT32, {32, 40});
    fill_pattern(a, 20 + rep);
    fill_pattern(b, 30 + rep);
    check_matmul(a, b, c);
  }
}
