// Pooling loops: max (with PyTorch's indices), average and adaptive average
// over [N, C, H, W] views of any strides (docs/kernel_conventions.md,
// "Convolution and pooling"). One (n, c) plane per task; window bounds are
// clipped once per output element, so the inner loops have no branches on
// padding. 16-bit floats compute in float32, averages accumulate in double
// (int64 for integers, which divide truncating, as PyTorch).
#include "common.hpp"
#include "kernels.hpp"
#include "loops.hpp"
#include "pool.hpp"

#include <algorithm>
#include <cmath>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <limits>
#include <type_traits>
#include <vector>

namespace loom::cpu {
namespace {

struct Plane {
  int64_t N, C, H, W, OH, OW;
  int64_t xs[4], ys[4];
};

Plane read_planes(const LoomKernelCall& c, const char* op) {
  const LoomTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  if (x.ndim != 4 || y.ndim != 4 || x.dtype != y.dtype || x.shape[0] != y.shape[0] ||
      x.shape[1] != y.shape[1]) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected 4-D input and output of one dtype", op);
  Plane p{x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[2], y.shape[3], {}, {}};
  for (int i = 0; i < 4; ++i) {
    p.xs[i] = x.strides[i];
    p.ys[i] = y.strides[i];
  }
  return p;
}

const int64_t* pair(const LoomKernelCall& c, int i, const char* op) {
  if (i >= c.num_values || c.values[i].kind != LOOM_VALUE_INT_LIST || c.values[i].u.ints.size != 2)
    [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected a 2-element int list at value %d", op, i);
  return c.values[i].u.ints.data;
}

// One step of a running max: v replaces m when larger or NaN (NaN then
// sticks, as in PyTorch). Written so that the compare becomes maxss/cmov and
// only the NaN test branches (never taken on clean data, so it predicts):
// GCC turns `(v > m || v != v) ? v : m` into a branch on v > m, which
// mispredicts half the time on random data and made max_pool2d ~10x slower
// than its memory traffic.
template <class A>
inline A max_step(A m, A v) {
  m = v > m ? v : m;
  if (v != v) [[unlikely]] m = v;
  return m;
}

// Planes i, i + 1, ... as (batch n, channel ch), carried forward: one
// divide per range of planes, not two per plane (global pooling's planes
// are small enough for those to show).
struct PlaneCursor {
  int64_t n, ch;
  PlaneCursor(int64_t i, int64_t C) : n(i / C), ch(i % C) {}
  void next(int64_t C) {
    if (++ch == C) {
      ch = 0;
      ++n;
    }
  }
};

// Runs f(n, c) over every plane, several planes per task when they are small.
template <class F>
void for_planes(const Plane& p, int64_t work_per_plane, F&& f) {
  parallel_for(p.N * p.C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work_per_plane)),
               [&](int64_t lo, int64_t hi) {
                 for (PlaneCursor at(lo, p.C); lo < hi; ++lo, at.next(p.C)) f(at.n, at.ch);
               });
}

// max_pool2d without indices on rows of unit stride and dilation 1 (the
// common case): a branchless running max (NaN sticks, as in the general
// path) over one output row at a time, interior columns without bounds
// checks, so the compiler can vectorise across output columns.
template <class T>
void max_pool_rows(const Plane& p, const int64_t* k, const int64_t* s, const int64_t* pd,
                   const T* x, T* y) {
  using A = arith_t<T>;
  // Interior columns: the whole window inside [0, W).
  const int64_t ow_a = std::min(p.OW, (pd[1] + s[1] - 1) / s[1]);
  const int64_t lim = p.W - k[1] + pd[1];
  const int64_t ow_b = lim < 0 ? ow_a : std::max(ow_a, std::min(p.OW, lim / s[1] + 1));
  for_planes(p, p.OH * p.OW * k[0] * k[1], [&](int64_t n, int64_t ch) {
    const T* xp = x + n * p.xs[0] + ch * p.xs[1];
    thread_local std::vector<A> best;
    best.resize(static_cast<size_t>(p.OW));
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      const int64_t h0 = oh * s[0] - pd[0];
      const int64_t kh0 = std::max<int64_t>(0, -h0), kh1 = std::min(k[0], p.H - h0);
      std::fill(best.begin(), best.end(), -std::numeric_limits<A>::infinity());
      A* b = best.data();
      for (int64_t kh = kh0; kh < kh1; ++kh) {
        const T* xr = xp + (h0 + kh) * p.xs[2];
        const int64_t kw_n = k[1], st = s[1], off = -pd[1];
        auto edge = [&](int64_t ow) {
          const int64_t w0 = ow * st + off;
          A m = b[ow];
          for (int64_t kw = std::max<int64_t>(0, -w0); kw < std::min(kw_n, p.W - w0); ++kw) {
            const A v = to_arith(xr[w0 + kw]);
            m = max_step(m, v);
          }
          b[ow] = m;
        };
        for (int64_t ow = 0; ow < ow_a; ++ow) edge(ow);
        if (kw_n == 3 && st == 2) {  // the ResNet stem window, unrolled
          for (int64_t ow = ow_a; ow < ow_b; ++ow) {
            const T* q = xr + ow * 2 + off;
            A m = b[ow];
            const A v0 = to_arith(q[0]), v1 = to_arith(q[1]), v2 = to_arith(q[2]);
            m = max_step(m, v0);
            m = max_step(m, v1);
            m = max_step(m, v2);
            b[ow] = m;
          }
        } else {
          for (int64_t ow = ow_a; ow < ow_b; ++ow) {
            const T* q = xr + ow * st + off;
            A m = b[ow];
            for (int64_t kw = 0; kw < kw_n; ++kw) {
              const A v = to_arith(q[kw]);
              m = max_step(m, v);
            }
            b[ow] = m;
          }
        }
        for (int64_t ow = ow_b; ow < p.OW; ++ow) edge(ow);
      }
      T* yr = y + n * p.ys[0] + ch * p.ys[1] + oh * p.ys[2];
      for (int64_t ow = 0; ow < p.OW; ++ow) yr[ow * p.ys[3]] = from_arith<T>(b[ow]);
    }
  });
}

// One output row of 2x2 / stride 2 max pooling over input rows r0, r1 (unit
// stride, w elements apart in the plane's index space): the maxima into
// `best` and, when `at` is given, each winner's plane index (`top`, the
// row's first window corner, + 2 i + its offset 0, 1, w or w + 1). A pair
// visited in the order (a, b) keeps b when it is larger or NaN, so the first
// of equal values and the last NaN win, as in the sequential loop; the
// window is the tree (r0 pair, r1 pair), then the two winners, r1's second.
// Scalar C++ of this compiles to compare-and-branch, which random data
// mispredicts (106 us for a (32, 32, 8, 8) input; GCC 12 does not vectorise
// the de-interleaving loads), hence SSE2 (x86-64's baseline) for float: 4
// outputs per step from selects on compare masks.
template <class T>
void max_2x2_scalar(const T* r0, const T* r1, int64_t from, int64_t n, int64_t w, T* best, int64_t* at,
                    int64_t top) {
  for (int64_t i = from; i < n; ++i) {
    const T a = r0[2 * i], b = r0[2 * i + 1], c = r1[2 * i], d = r1[2 * i + 1];
    const bool take_b = (b > a) | (b != b), take_d = (d > c) | (d != d);
    const T upper = take_b ? b : a, lower = take_d ? d : c;
    const bool take_lower = (lower > upper) | (lower != lower);
    best[i] = take_lower ? lower : upper;
    if (at) at[i] = top + 2 * i + (take_lower ? w + take_d : static_cast<int64_t>(take_b));
  }
}

template <class T>
void max_2x2_row(const T* r0, const T* r1, int64_t n, int64_t w, T* best, int64_t* at, int64_t top) {
  int64_t i = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float>) {
    // Offsets within the window as int32 (w fits: checked by the caller).
    const __m128i one = _mm_set1_epi32(1), pitch = _mm_set1_epi32(static_cast<int32_t>(w));
    const __m128i step = _mm_set_epi32(6, 4, 2, 0), zero = _mm_setzero_si128();
    // mask ? x : y, and "y replaced by x when x > y or x is NaN".
    auto select = [](__m128 mask, __m128 x, __m128 y) { return _mm_or_ps(_mm_and_ps(mask, x), _mm_andnot_ps(mask, y)); };
    auto takes = [](__m128 x, __m128 y) { return _mm_or_ps(_mm_cmpgt_ps(x, y), _mm_cmpunord_ps(x, x)); };
    for (; i + 4 <= n; i += 4) {
      const __m128 p0 = _mm_loadu_ps(r0 + 2 * i), p1 = _mm_loadu_ps(r0 + 2 * i + 4);
      const __m128 q0 = _mm_loadu_ps(r1 + 2 * i), q1 = _mm_loadu_ps(r1 + 2 * i + 4);
      const __m128 a = _mm_shuffle_ps(p0, p1, _MM_SHUFFLE(2, 0, 2, 0)), b = _mm_shuffle_ps(p0, p1, _MM_SHUFFLE(3, 1, 3, 1));
      const __m128 c = _mm_shuffle_ps(q0, q1, _MM_SHUFFLE(2, 0, 2, 0)), d = _mm_shuffle_ps(q0, q1, _MM_SHUFFLE(3, 1, 3, 1));
      const __m128 take_b = takes(b, a), take_d = takes(d, c);
      const __m128 upper = select(take_b, b, a), lower = select(take_d, d, c);
      const __m128 take_lower = takes(lower, upper);
      const __m128i upper_at = _mm_and_si128(_mm_castps_si128(take_b), one);
      const __m128i lower_at = _mm_add_epi32(pitch, _mm_and_si128(_mm_castps_si128(take_d), one));
      const __m128i lm = _mm_castps_si128(take_lower);
      _mm_storeu_ps(best + i, select(take_lower, lower, upper));
      if (!at) continue;
      // 2 i + offset (< 2^31), widened to int64 and added to the base.
      const __m128i off = _mm_add_epi32(_mm_or_si128(_mm_and_si128(lm, lower_at), _mm_andnot_si128(lm, upper_at)),
                                        _mm_add_epi32(step, _mm_set1_epi32(static_cast<int32_t>(2 * i))));
      const __m128i base = _mm_set1_epi64x(top);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(at + i), _mm_add_epi64(base, _mm_unpacklo_epi32(off, zero)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(at + i + 2), _mm_add_epi64(base, _mm_unpackhi_epi32(off, zero)));
    }
  }
#endif
  max_2x2_scalar(r0, r1, i, n, w, best, at, top);
}

// The 2x2 window with stride 2, no padding or dilation, every window inside
// the plane, rows of unit stride (LeNet / VGG pooling, the digits CNN): no
// per-output bounds arithmetic, one vectorised row kernel per output row.
// float and double only (16-bit floats take the general loop).
template <class T>
void max_pool_2x2(const Plane& p, const T* x, T* y, int64_t* ind, const int64_t* is) {
  // Strided output rows go through a stack buffer.
  constexpr int64_t kChunk = 64;
  const bool direct = p.ys[3] == 1 && (!ind || is[3] == 1);
  for_planes(p, p.OH * p.OW * 4, [&](int64_t n, int64_t ch) {
    T best[kChunk];
    int64_t at[kChunk];
    const T* xp = x + n * p.xs[0] + ch * p.xs[1];
    T* yp = y + n * p.ys[0] + ch * p.ys[1];
    int64_t* ip = ind ? ind + n * is[0] + ch * is[1] : nullptr;
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      const T* r0 = xp + 2 * oh * p.xs[2];
      T* yr = yp + oh * p.ys[2];
      int64_t* ir = ip ? ip + oh * is[2] : nullptr;
      const int64_t top = 2 * oh * p.W;
      if (direct) {
        max_2x2_row<T>(r0, r0 + p.xs[2], p.OW, p.W, yr, ir, top);
        continue;
      }
      for (int64_t ow0 = 0; ow0 < p.OW; ow0 += kChunk) {
        const int64_t m = std::min(kChunk, p.OW - ow0);
        max_2x2_row<T>(r0 + 2 * ow0, r0 + p.xs[2] + 2 * ow0, m, p.W, best, ir ? at : nullptr, top + 2 * ow0);
        for (int64_t j = 0; j < m; ++j) yr[(ow0 + j) * p.ys[3]] = best[j];
        if (ir)
          for (int64_t j = 0; j < m; ++j) ir[(ow0 + j) * is[3]] = at[j];
      }
    }
  });
}

// One window position over m outputs of a row (the outputs' elements
// `stride` apart): each running max takes v when larger or NaN, and its
// position r (row * W + column of the window's first output, the same for
// every output). int32 positions keep the lanes as wide as float's, so
// with selects (no trapping math) the loop vectorises.
template <int Stride, class T, class A>
LOOM_CPU_CLONES void max_window_step(const T* __restrict x, int64_t stride, int64_t m, int32_t r,
                                     A* __restrict best, int32_t* __restrict at) {
  const int64_t st = Stride ? Stride : stride;
  for (int64_t j = 0; j < m; ++j) {
    const A v = to_arith(x[j * st]);
    const bool take = (v > best[j]) | (v != v);
    best[j] = take ? v : best[j];
    at[j] = take ? r : at[j];
  }
}

// The outputs [ow0, ow0 + m) of one output row whose windows lie inside the
// plane's columns (unit column stride, dilation 1, H·W below 2^31): the
// window's positions outermost, the outputs innermost, so each output's
// running max is its own chain (ResNet's 3x3 stride-2 pool ran 10x slower
// as one compare-and-branch chain per output). The same visiting order and
// rules as the general loop: the first of equal values, the last NaN.
// at[j] comes back as the plane index of output j's winner.
template <int Stride, class T, class A>
void max_pool_interior(const T* xp, int64_t xs_row, int64_t W, int64_t h0, int64_t kh0, int64_t kh1,
                       int64_t row_step, int64_t kw, int64_t s, int64_t pad, int64_t ow0, int64_t m, A* best,
                       int32_t* rel, int64_t* at) {
  const int64_t st = Stride ? Stride : s;
  const int64_t w_first = ow0 * st - pad;
  const int32_t r0 = static_cast<int32_t>((h0 + kh0 * row_step) * W);
  for (int64_t j = 0; j < m; ++j) {
    best[j] = -std::numeric_limits<A>::infinity();
    rel[j] = r0;
  }
  for (int64_t kh = kh0; kh < kh1; ++kh) {
    const int64_t ih = h0 + kh * row_step;
    const T* xr = xp + ih * xs_row + w_first;
    for (int64_t k = 0; k < kw; ++k)
      max_window_step<Stride, T, A>(xr + k, st, m, static_cast<int32_t>(ih * W + k), best, rel);
  }
  for (int64_t j = 0; j < m; ++j) at[j] = rel[j] + w_first + j * st;
}

template <class T>
void max_pool(const LoomKernelCall& c, const Plane& p) {
  using A = arith_t<T>;
  const int64_t *k = pair(c, 0, "max_pool2d"), *s = pair(c, 1, "max_pool2d"),
                *pd = pair(c, 2, "max_pool2d"), *d = pair(c, 3, "max_pool2d");
  const T* x = plugin::data_ptr<const T>(c.inputs[0]);
  T* y = plugin::data_ptr<T>(c.outputs[0]);
  int64_t* ind = c.num_outputs > 1 ? plugin::data_ptr<int64_t>(c.outputs[1]) : nullptr;
  const int64_t* is = c.num_outputs > 1 ? c.outputs[1].strides : nullptr;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (k[0] == 2 && k[1] == 2 && s[0] == 2 && s[1] == 2 && pd[0] == 0 && pd[1] == 0 && d[0] == 1 && d[1] == 1 &&
        p.xs[3] == 1 && 2 * p.OH <= p.H && 2 * p.OW <= p.W && p.W <= INT32_MAX / 4)
      return max_pool_2x2<T>(p, x, y, ind, is);
  }
  if (!ind && p.xs[3] == 1 && d[0] == 1 && d[1] == 1) return max_pool_rows<T>(p, k, s, pd, x, y);
  // Output columns [ow_lo, ow_hi) have their whole window inside the
  // plane's columns: max_pool_interior's, when rows have unit stride and
  // columns no dilation.
  int64_t ow_lo = p.OW, ow_hi = p.OW;
  if (p.xs[3] == 1 && d[1] == 1 && p.H * p.W < INT32_MAX) {
    ow_lo = std::min(p.OW, (pd[1] + s[1] - 1) / s[1]);
    ow_hi = p.W + pd[1] - k[1] >= 0 ? std::min(p.OW, (p.W + pd[1] - k[1]) / s[1] + 1) : 0;
    ow_hi = std::max(ow_hi, ow_lo);
  }
  for_planes(p, p.OH * p.OW * k[0] * k[1], [&](int64_t n, int64_t ch) {
    const T* xp = x + n * p.xs[0] + ch * p.xs[1];
    constexpr int64_t kChunk = 64;
    A best_row[kChunk];
    int32_t rel_row[kChunk];
    int64_t at_row[kChunk];
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      // First and one-past-last kernel rows whose input row is inside.
      int64_t h0 = oh * s[0] - pd[0];
      const int64_t kh0 = h0 < 0 ? (-h0 + d[0] - 1) / d[0] : 0;
      const int64_t kh1 = std::min(k[0], (p.H - h0 + d[0] - 1) / d[0]);
      for (int64_t ow0 = ow_lo; ow0 < ow_hi; ow0 += kChunk) {
        const int64_t m = std::min(kChunk, ow_hi - ow0);
        if (s[1] == 2)
          max_pool_interior<2, T>(xp, p.xs[2], p.W, h0, kh0, kh1, d[0], k[1], s[1], pd[1], ow0, m, best_row, rel_row,
                                    at_row);
        else if (s[1] == 1)
          max_pool_interior<1, T>(xp, p.xs[2], p.W, h0, kh0, kh1, d[0], k[1], s[1], pd[1], ow0, m, best_row, rel_row,
                                    at_row);
        else
          max_pool_interior<0, T>(xp, p.xs[2], p.W, h0, kh0, kh1, d[0], k[1], s[1], pd[1], ow0, m, best_row, rel_row,
                                    at_row);
        for (int64_t j = 0; j < m; ++j) {
          const int64_t ow = ow0 + j;
          y[n * p.ys[0] + ch * p.ys[1] + oh * p.ys[2] + ow * p.ys[3]] = from_arith<T>(best_row[j]);
          if (ind) ind[n * is[0] + ch * is[1] + oh * is[2] + ow * is[3]] = at_row[j];
        }
      }
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        if (ow == ow_lo) ow = ow_hi;  // the interior is done
        if (ow >= p.OW) break;
        const int64_t w0 = ow * s[1] - pd[1];
        const int64_t kw0 = w0 < 0 ? (-w0 + d[1] - 1) / d[1] : 0;
        const int64_t kw1 = std::min(k[1], (p.W - w0 + d[1] - 1) / d[1]);
        // As PyTorch: start at -inf with the first valid position; NaN wins.
        A best = -std::numeric_limits<A>::infinity();
        int64_t best_i = (h0 + kh0 * d[0]) * p.W + (w0 + kw0 * d[1]);
        for (int64_t kh = kh0; kh < kh1; ++kh) {
          const int64_t ih = h0 + kh * d[0];
          const T* xr = xp + ih * p.xs[2];
          for (int64_t kw = kw0; kw < kw1; ++kw) {
            const int64_t iw = w0 + kw * d[1];
            const A v = to_arith(xr[iw * p.xs[3]]);
            // max_step with the index riding along (selects, see max_step).
            const int64_t i = ih * p.W + iw;
            const bool gt = v > best;
            best = gt ? v : best;
            best_i = gt ? i : best_i;
            if (v != v) [[unlikely]] {
              best = v;
              best_i = i;
            }
          }
        }
        y[n * p.ys[0] + ch * p.ys[1] + oh * p.ys[2] + ow * p.ys[3]] = from_arith<T>(best);
        if (ind) ind[n * is[0] + ch * is[1] + oh * is[2] + ow * is[3]] = best_i;
      }
    }
  });
}

// Integers go to int64 directly (widen would make them unsigned).
template <class A, class T>
inline A to_acc(T v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<A>(v);
  else
    return static_cast<A>(to_arith(v));
}

template <class T>
using avg_acc_t = std::conditional_t<std::is_floating_point_v<arith_t<T>>, double, int64_t>;

template <class T>
void avg_pool(const LoomKernelCall& c, const Plane& p) {
  using A = avg_acc_t<T>;
  const int64_t *k = pair(c, 0, "avg_pool2d"), *s = pair(c, 1, "avg_pool2d"),
                *pd = pair(c, 2, "avg_pool2d");
  const bool include_pad = c.values[4].u.i != 0;
  const bool has_div = c.values[5].kind == LOOM_VALUE_INT;
  const int64_t divisor = has_div ? c.values[5].u.i : 0;
  const T* x = plugin::data_ptr<const T>(c.inputs[0]);
  T* y = plugin::data_ptr<T>(c.outputs[0]);
  for_planes(p, p.OH * p.OW * k[0] * k[1], [&](int64_t n, int64_t ch) {
    const T* xp = x + n * p.xs[0] + ch * p.xs[1];
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      int64_t h0 = oh * s[0] - pd[0], h1 = std::min(h0 + k[0], p.H + pd[0]);
      const int64_t ph = h1 - h0;
      h0 = std::max<int64_t>(h0, 0);
      h1 = std::min(h1, p.H);
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        int64_t w0 = ow * s[1] - pd[1], w1 = std::min(w0 + k[1], p.W + pd[1]);
        const int64_t pool = ph * (w1 - w0);
        w0 = std::max<int64_t>(w0, 0);
        w1 = std::min(w1, p.W);
        A sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += to_acc<A>(xp[ih * p.xs[2] + iw * p.xs[3]]);
        const int64_t div = has_div ? divisor : include_pad ? pool : (h1 - h0) * (w1 - w0);
        const A v = (h0 >= h1 || w0 >= w1) ? A{0} : sum / static_cast<A>(div);
        y[n * p.ys[0] + ch * p.ys[1] + oh * p.ys[2] + ow * p.ys[3]] = plugin::cast<T>(v);
      }
    }
  });
}

// Adds four consecutive elements, widened to double, to acc (one vcvtps2pd
// and one vaddpd for float). By reference: a 32-byte vector passed by value
// has a different ABI with and without AVX.
using Double4 = double __attribute__((vector_size(32)));

template <class T>
inline void add_double4(Double4& acc, const T* x) {
  acc += Double4{to_acc<double>(x[0]), to_acc<double>(x[1]), to_acc<double>(x[2]), to_acc<double>(x[3])};
}

// The sum of a contiguous run in double, in four independent vector
// accumulators: with one, every add waits for the one before, which left
// ResNet's 49-element global-pooling planes at 0.38x libtorch's speed
// (docs/benchmarks.md). The order of a double sum of floats barely matters.
template <class T>
inline double sum_as_double(const T* x, int64_t n) {
  Double4 a0{}, a1{}, a2{}, a3{};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    add_double4(a0, x + j);
    add_double4(a1, x + j + 4);
    add_double4(a2, x + j + 8);
    add_double4(a3, x + j + 12);
  }
  for (; j + 4 <= n; j += 4) add_double4(a1, x + j);
  double rest = 0;
  for (; j < n; ++j) rest += to_acc<double>(x[j]);
  const Double4 s = (a0 + a1) + (a2 + a3);
  return ((s[0] + s[1]) + (s[2] + s[3])) + rest;
}

// sum_as_double as an AVX2 clone, for windows of whole rows.
template <class T>
LOOM_CPU_CLONES double sum_run(const T* x, int64_t n) {
  return sum_as_double(x, n);
}

// Window bounds [floor(i*L/n), ceil((i+1)*L/n)) for i < n.
std::vector<int64_t> adaptive_bounds(int64_t L, int64_t n) {
  std::vector<int64_t> b(static_cast<size_t>(2 * n));
  for (int64_t i = 0; i < n; ++i) {
    b[static_cast<size_t>(2 * i)] = i * L / n;
    b[static_cast<size_t>(2 * i + 1)] = ((i + 1) * L + n - 1) / n;
  }
  return b;
}

// Global average pooling (output 1×1) of planes lo..hi whose H·W elements
// are one contiguous run each: ResNet's head, [N, 2048, 7, 7] -> 1×1. The
// whole range is one AVX2 clone, so a plane costs its sum and no call.
template <class T>
LOOM_CPU_CLONES void global_means(const T* x, T* y, const Plane& p, int64_t lo, int64_t hi) {
  const int64_t L = p.H * p.W;
  const double count = static_cast<double>(L);
  for (PlaneCursor at(lo, p.C); lo < hi; ++lo, at.next(p.C)) {
    const double sum = sum_as_double(x + at.n * p.xs[0] + at.ch * p.xs[1], L);
    y[at.n * p.ys[0] + at.ch * p.ys[1]] = plugin::cast<T>(sum / count);
  }
}

template <class T>
void adaptive_avg(const LoomKernelCall& c, const Plane& p) {
  const T* x = plugin::data_ptr<const T>(c.inputs[0]);
  T* y = plugin::data_ptr<T>(c.outputs[0]);
  if (p.OH == 1 && p.OW == 1 && p.xs[3] == 1 && p.xs[2] == p.W) {
    parallel_for(p.N * p.C, std::max<int64_t>(1, kParallelGrain / (p.H * p.W + 1)),
                 [&](int64_t lo, int64_t hi) { global_means(x, y, p, lo, hi); });
    return;
  }
  // Bounds once per call: 64-bit divisions per output element would cost
  // more than the sums of a small (global pooling) window.
  const std::vector<int64_t> hb = adaptive_bounds(p.H, p.OH), wb = adaptive_bounds(p.W, p.OW);
  const bool full_rows = p.xs[3] == 1 && p.xs[2] == p.W;
  const int64_t sw = p.xs[3];
  for_planes(p, p.H * p.W + p.OH * p.OW, [&](int64_t n, int64_t ch) {
    const T* xp = x + n * p.xs[0] + ch * p.xs[1];
    T* yp = y + n * p.ys[0] + ch * p.ys[1];
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      const int64_t h0 = hb[static_cast<size_t>(2 * oh)], h1 = hb[static_cast<size_t>(2 * oh + 1)];
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        const int64_t w0 = wb[static_cast<size_t>(2 * ow)], w1 = wb[static_cast<size_t>(2 * ow + 1)];
        double sum = 0;
        if (full_rows && w0 == 0 && w1 == p.W) {
          // The window is whole contiguous rows (global pooling): one run.
          sum = sum_run(xp + h0 * p.W, (h1 - h0) * p.W);
        } else {
          for (int64_t ih = h0; ih < h1; ++ih) {
            const T* xr = xp + ih * p.xs[2];
            // Reassociating the row sum lets it vectorise; double keeps it exact enough.
#pragma omp simd reduction(+ : sum)
            for (int64_t iw = w0; iw < w1; ++iw) sum += to_acc<double>(xr[iw * sw]);
          }
        }
        yp[oh * p.ys[2] + ow * p.ys[3]] = plugin::cast<T>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
    }
  });
}

}  // namespace

void max_pool2d(const LoomKernelCall& c) {
  if (c.num_inputs != 1 || c.num_outputs < 1 || c.num_outputs > 2) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu max_pool2d: expected 1 input and 1 or 2 outputs");
  const Plane p = read_planes(c, "max_pool2d");
  if (c.num_outputs == 2 && (c.outputs[1].dtype != LOOM_DTYPE_INT64 || c.outputs[1].ndim != 4)) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu max_pool2d: expected 4-D int64 indices");
  if (p.N * p.C * p.OH * p.OW == 0) return;
  dispatch<DTypes::Floating>(c.inputs[0].dtype, "max_pool2d", [&](auto t) { max_pool<decltype(t)>(c, p); });
}

void avg_pool2d(const LoomKernelCall& c) {
  expect_arity(c, "avg_pool2d", 1, 1);
  expect_values(c, "avg_pool2d", 6);
  const Plane p = read_planes(c, "avg_pool2d");
  if (p.N * p.C * p.OH * p.OW == 0) return;
  dispatch<DTypes::NoBool>(c.inputs[0].dtype, "avg_pool2d", [&](auto t) { avg_pool<decltype(t)>(c, p); });
}

void adaptive_avg_pool2d(const LoomKernelCall& c) {
  expect_arity(c, "adaptive_avg_pool2d", 1, 1);
  const Plane p = read_planes(c, "adaptive_avg_pool2d");
  if (p.N * p.C * p.OH * p.OW == 0) return;
  dispatch<DTypes::Floating>(c.inputs[0].dtype, "adaptive_avg_pool2d",
                             [&](auto t) { adaptive_avg<decltype(t)>(c, p); });
}

void register_pool_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("max_pool2d", "cpu", kernel<max_pool2d>, kFloatingMask);
  r.kernel("max_pool2d_with_indices", "cpu", kernel<max_pool2d>, kFloatingMask);
  r.kernel("avg_pool2d", "cpu", kernel<avg_pool2d>, kNoBoolMask);
  r.kernel("adaptive_avg_pool2d", "cpu", kernel<adaptive_avg_pool2d>, kFloatingMask);
}

}  // namespace loom::cpu
