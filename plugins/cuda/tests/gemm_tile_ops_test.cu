// The own GEMM's tile program (kernels/gemm_tile_ops.cuh) on the host: the
// blocks' threads run one after another, phase by phase, as gemm_own.cu's
// kernel runs them between __syncthreads, and every product is compared
// with a plain triple loop in double. Covers the four transpose cases,
// sizes that are and are not tile multiples, k shorter and longer than a
// step, leading dimensions past the rows, batch strides (0 repeats a
// matrix), alpha / beta (beta == 0 does not read C: NaN there stays out)
// and the 16-bit storage types. Built by nvcc as a host program.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/gemm_tile_ops.cuh"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

using namespace loom::cuda;
using namespace loom::cuda::gemm;

namespace {

// Runs the whole call the way the kernel's blocks do, one tile at a time.
template <class T>
void run_on_host(const Call& g) {
  const int64_t down = tiles_down(g), across = tiles_across(g), tiles = down * across * g.count;
  auto panels = std::make_unique<Panels<T>>();
  std::vector<Accumulator<T>> acc(kThreads);
  for (int64_t n = 0; n < tiles; ++n) {
    const Tile<T> t = tile_of<T>(g, n, down, across);
    for (auto& a : acc) a = Accumulator<T>{};
    for (int64_t k0 = 0; k0 < g.k; k0 += kTileK) {
      // A tile's panels are overwritten each step: stale values would show.
      for (int tid = 0; tid < kThreads; ++tid) load_step(g, t, k0, tid, *panels);
      for (int tid = 0; tid < kThreads; ++tid) multiply_step(*panels, tid, acc[tid]);
    }
    for (int tid = kThreads - 1; tid >= 0; --tid) store(g, t, tid, acc[tid]);
  }
}

struct Case {
  bool ta, tb;
  int64_t m, n, k, count;
  int64_t pad = 0;  // extra leading-dimension elements
  bool repeat_first = false;  // batch stride 0 for the first operand
  double alpha = 1, beta = 0;
};

template <class T>
void check_case(const Case& cs, double tolerance) {
  std::mt19937 rng(static_cast<unsigned>(cs.m * 131 + cs.n * 17 + cs.k));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  // Stored shapes (column-major): first is m x k, or k x m when transposed.
  const int64_t rows_a = cs.ta ? cs.k : cs.m, cols_a = cs.ta ? cs.m : cs.k;
  const int64_t rows_b = cs.tb ? cs.n : cs.k, cols_b = cs.tb ? cs.k : cs.n;
  Call g;
  g.transpose_first = cs.ta;
  g.transpose_second = cs.tb;
  g.m = cs.m;
  g.n = cs.n;
  g.k = cs.k;
  g.ld_first = rows_a + cs.pad;
  g.ld_second = rows_b + cs.pad;
  g.ldc = cs.m + cs.pad;
  g.stride_first = cs.repeat_first ? 0 : g.ld_first * cols_a;
  g.stride_second = g.ld_second * cols_b;
  g.stride_c = g.ldc * cs.n;
  g.count = cs.count;
  g.alpha = cs.alpha;
  g.beta = cs.beta;
  const int64_t entries_a = cs.repeat_first ? 1 : cs.count;
  std::vector<T> a(static_cast<size_t>(g.ld_first * cols_a * entries_a)), b(static_cast<size_t>(g.stride_second * cs.count)),
      c(static_cast<size_t>(g.stride_c * cs.count));
  for (auto& v : a) v = narrow<T>(dist(rng));
  for (auto& v : b) v = narrow<T>(dist(rng));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (auto& v : c) v = narrow<T>(cs.beta == 0 ? nan : dist(rng));
  const std::vector<T> c0 = c;
  g.first = a.data();
  g.second = b.data();
  g.c = c.data();
  run_on_host<T>(g);

  for (int64_t e = 0; e < cs.count; ++e)
    for (int64_t j = 0; j < cs.n; ++j)
      for (int64_t i = 0; i < cs.m; ++i) {
        double sum = 0;
        for (int64_t p = 0; p < cs.k; ++p) {
          const T* ea = a.data() + e * g.stride_first;
          const T* eb = b.data() + e * g.stride_second;
          const double x = widen(cs.ta ? ea[p + i * g.ld_first] : ea[i + p * g.ld_first]);
          const double y = widen(cs.tb ? eb[j + p * g.ld_second] : eb[p + j * g.ld_second]);
          sum += x * y;
        }
        const int64_t at = e * g.stride_c + i + j * g.ldc;
        const double expected = cs.alpha * sum + (cs.beta != 0 ? cs.beta * double(widen(c0[at])) : 0.0);
        const double got = widen(c[at]);
        INFO("entry " << e << " (" << i << ", " << j << ")");
        REQUIRE(std::abs(got - expected) <= tolerance * (1 + std::abs(expected)));
      }
  // Padding rows of C (past m) are not written.
  for (int64_t e = 0; e < cs.count; ++e)
    for (int64_t j = 0; j < cs.n; ++j)
      for (int64_t i = cs.m; i < g.ldc; ++i) {
        const int64_t at = e * g.stride_c + i + j * g.ldc;
        REQUIRE(std::memcmp(&c[at], &c0[at], sizeof(T)) == 0);
      }
}

}  // namespace

TEST_CASE("own GEMM: the four transpose cases, tile and ragged sizes") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("transposes " << ta << ", " << tb);
      check_case<float>({ta, tb, 64, 64, 16, 1}, 1e-5);
      check_case<float>({ta, tb, 70, 33, 5, 1}, 1e-5);
      check_case<float>({ta, tb, 1, 130, 37, 1}, 1e-5);
      check_case<double>({ta, tb, 129, 3, 50, 1}, 1e-12);
    }
}

TEST_CASE("own GEMM: leading dimensions, batches, a repeated operand, alpha and beta") {
  check_case<float>({false, true, 17, 19, 23, 3, /*pad*/ 5}, 1e-5);
  check_case<double>({true, false, 40, 9, 70, 4, 2, /*repeat_first*/ true}, 1e-12);
  check_case<float>({false, false, 65, 66, 17, 2, 0, false, /*alpha*/ 0.5, /*beta*/ -2.0}, 1e-5);
  check_case<double>({true, true, 3, 4, 1, 5, 1, true, 2.0, 1.0}, 1e-12);
}

TEST_CASE("own GEMM: 16-bit storage accumulates in float, rounds once") {
  check_case<__half>({false, true, 33, 40, 64, 2}, 2e-3);
  check_case<__nv_bfloat16>({true, false, 20, 70, 48, 1, 3, false, 1.0, 0.5}, 1e-2);
}
