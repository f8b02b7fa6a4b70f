// The plugin's own GEMM (gemm_own.cu) as phases of a thread block, so the
// host test (tests/gemm_tile_ops_test.cu) runs the same code: a block of
// kThreads threads owns a kTileM x kTileN tile of C and walks k in steps
// of kTileK. Each step every thread calls load_step (copying its share of
// the op(first) and op(second) panels into shared memory, zeros past the
// edges), the block synchronises, every thread calls multiply_step (its 4 x
// 4 outputs, rows tx + 16 r and columns ty + 16 c, so neighbouring threads
// read neighbouring shared words and write neighbouring C elements), and
// the block synchronises again. store writes alpha acc + beta C.
//
// Plain SIMT in the compute type (float for float16 / bfloat16 / float32,
// double for float64): the portable fallback where no vendor BLAS is built
// in, not a match for cuBLAS or rocBLAS on tensor / matrix cores.
#pragma once

#include "dtype.cuh"
#include "gemm_call.hpp"
#include "vendor/gpu_target.hpp"

#include <cstdint>

namespace loom::LOOM_GPU_NAMESPACE::gemm {

inline constexpr int kTileM = 64, kTileN = 64, kTileK = 16;
inline constexpr int kSide = 16;                  // threads per tile side
inline constexpr int kThreads = kSide * kSide;    // per block
inline constexpr int kPerThread = kTileM / kSide;  // outputs per thread per side

// The k-step's panels: a[p][i] = op(first)(i0 + i, k0 + p), b[p][j] =
// op(second)(k0 + p, j0 + j). One padding column keeps the transposed
// loads off a single bank.
template <class T>
struct Panels {
  opmath_t<T> a[kTileK][kTileM + 1];
  opmath_t<T> b[kTileK][kTileN + 1];
};

template <class T>
struct Accumulator {
  opmath_t<T> v[kPerThread][kPerThread];
};

// Where one block's tile sits: its matrices (already offset to the batch
// entry) and its first row and column of C.
template <class T>
struct Tile {
  const T* first;
  const T* second;
  T* c;
  int64_t i0, j0;
};

// Element (r, c) of op(X), X column-major with leading dimension ld.
template <class T>
LOOM_HD inline opmath_t<T> op_element(const T* x, bool transpose, int64_t ld, int64_t r, int64_t c) {
  return widen(transpose ? x[c + r * ld] : x[r + c * ld]);
}

// Thread `tid`'s share of the panels at k0. Consecutive threads walk the
// dimension that is contiguous in memory, so the global reads coalesce.
template <class T>
LOOM_HD inline void load_step(const Call& g, const Tile<T>& t, int64_t k0, int tid, Panels<T>& s) {
  for (int e = tid; e < kTileK * kTileM; e += kThreads) {
    const bool along_k = g.transpose_first;  // op(first)(i, p) = first[p + i ld]: p contiguous
    const int p = along_k ? e % kTileK : e / kTileM, i = along_k ? e / kTileK : e % kTileM;
    const int64_t gi = t.i0 + i, gp = k0 + p;
    s.a[p][i] = gi < g.m && gp < g.k ? op_element(t.first, g.transpose_first, g.ld_first, gi, gp) : opmath_t<T>(0);
  }
  for (int e = tid; e < kTileK * kTileN; e += kThreads) {
    const bool along_k = !g.transpose_second;  // op(second)(p, j) = second[p + j ld]: p contiguous
    const int p = along_k ? e % kTileK : e / kTileN, j = along_k ? e / kTileK : e % kTileN;
    const int64_t gp = k0 + p, gj = t.j0 + j;
    s.b[p][j] =
        gp < g.k && gj < g.n ? op_element(t.second, g.transpose_second, g.ld_second, gp, gj) : opmath_t<T>(0);
  }
}

template <class T>
LOOM_HD inline void multiply_step(const Panels<T>& s, int tid, Accumulator<T>& acc) {
  const int tx = tid % kSide, ty = tid / kSide;
  for (int p = 0; p < kTileK; ++p) {
    opmath_t<T> a[kPerThread], b[kPerThread];
    for (int r = 0; r < kPerThread; ++r) a[r] = s.a[p][tx + kSide * r];
    for (int c = 0; c < kPerThread; ++c) b[c] = s.b[p][ty + kSide * c];
    for (int r = 0; r < kPerThread; ++r)
      for (int c = 0; c < kPerThread; ++c) acc.v[r][c] += a[r] * b[c];
  }
}

// C = alpha acc + beta C for the thread's outputs inside the matrix; with
// beta == 0 C is not read.
template <class T>
LOOM_HD inline void store(const Call& g, const Tile<T>& t, int tid, const Accumulator<T>& acc) {
  using C = opmath_t<T>;
  const int tx = tid % kSide, ty = tid / kSide;
  const C alpha = static_cast<C>(g.alpha), beta = static_cast<C>(g.beta);
  for (int c = 0; c < kPerThread; ++c) {
    const int64_t j = t.j0 + ty + kSide * c;
    if (j >= g.n) continue;
    for (int r = 0; r < kPerThread; ++r) {
      const int64_t i = t.i0 + tx + kSide * r;
      if (i >= g.m) continue;
      T& out = t.c[i + j * g.ldc];
      const C prior = g.beta != 0 ? beta * widen(out) : C(0);
      out = narrow<T>(alpha * acc.v[r][c] + prior);
    }
  }
}

// The tiles of one batch entry, and tile number `n` of the whole call.
inline int64_t tiles_down(const Call& g) { return (g.m + kTileM - 1) / kTileM; }
inline int64_t tiles_across(const Call& g) { return (g.n + kTileN - 1) / kTileN; }

template <class T>
LOOM_HD inline Tile<T> tile_of(const Call& g, int64_t n, int64_t down, int64_t across) {
  const int64_t per_entry = down * across, b = n / per_entry, rest = n % per_entry;
  return {static_cast<const T*>(g.first) + b * g.stride_first, static_cast<const T*>(g.second) + b * g.stride_second,
          static_cast<T*>(g.c) + b * g.stride_c, (rest % down) * kTileM, (rest / down) * kTileN};
}

}  // namespace loom::LOOM_GPU_NAMESPACE::gemm
