// Float-precision helpers for the nn kernels (softmax, log_softmax,
// layer_norm): a branch-free float exp that GCC vectorises eight lanes wide
// under AVX2, and vector max/sum of a contiguous float span.
//
// unary_math.hpp's exp works in double (four lanes) so that the unary ops
// round correctly; softmax only needs a relative error of a few ulp, and
// its exponentials are the hot loop, so it takes this float one instead.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

#define LOOM_NN_INLINE [[gnu::always_inline]] inline

namespace loom::cpu::nnmath {

inline constexpr float kNegInfF = -std::numeric_limits<float>::infinity();

// e^x for x <= 88 (softmax calls it on x - max <= 0), error about 1 ulp
// (Cephes expf: k = round(x / ln2), x = k ln2 + r with ln2 in two parts,
// a degree-6 polynomial for e^r, then 2^k from its bits). Below -87.3 the
// true result is under float's smallest normal and this returns exactly 0,
// so masked (-inf) entries give 0; NaN gives NaN.
LOOM_NN_INLINE float exp_f(float x) {
  constexpr float kShifter = 0x1.8p23f;  // x + kShifter rounds to an integer in the low bits
  const float xc = x < -87.3f ? -87.3f : (x > 88.0f ? 88.0f : x);
  const float t = xc * 1.44269504088896341f + kShifter;
  const float k = t - kShifter;
  const int32_t ki = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(kShifter);
  const float r = (xc - k * 0.693359375f) - k * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * (r * r) + r + 1.0f;
  const float y = er * std::bit_cast<float>((ki + 127) << 23);  // k in [-126, 127]
  const float z = x < -87.3f ? 0.0f : y;
  return x != x ? x : z;
}

// Eight floats: one ymm register in the AVX2 clone, two xmm in the
// baseline one. The spans below are written with it because GCC does not
// vectorise a float max or sum over scalar lanes by itself (it may not
// reassociate), so the lane order is spelled out: two vector accumulators,
// combined, then the lanes in order, then the tail. That order depends only
// on n, never on threads.
typedef float v8f __attribute__((vector_size(32)));

// Out-parameters: returning a vector by value would change the ABI between
// the clones (and GCC warns of it).
LOOM_NN_INLINE void load8(v8f& v, const float* p) { std::memcpy(&v, p, sizeof v); }
LOOM_NN_INLINE void splat8(v8f& v, float x) { v = v8f{x, x, x, x, x, x, x, x}; }

// The max of p[0, n) (-inf when n = 0). A NaN may or may not win, which
// softmax does not mind: the shift is arbitrary and a NaN row still sums
// to NaN.
LOOM_NN_INLINE float max_span(const float* p, int64_t n) {
  v8f a, b, x, y;
  splat8(a, kNegInfF);
  b = a;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    load8(x, p + i);
    load8(y, p + i + 8);
    a = x > a ? x : a;
    b = y > b ? y : b;
  }
  a = b > a ? b : a;
  float m = kNegInfF;
  for (int l = 0; l < 8; ++l) m = a[l] > m ? a[l] : m;
  for (; i < n; ++i) m = p[i] > m ? p[i] : m;
  return m;
}

// Σ p[0, n).
LOOM_NN_INLINE float sum_span(const float* p, int64_t n) {
  v8f a, b, x, y;
  splat8(a, 0.0f);
  b = a;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    load8(x, p + i);
    load8(y, p + i + 8);
    a += x;
    b += y;
  }
  a += b;
  float s = 0;
  for (int l = 0; l < 8; ++l) s += a[l];
  for (; i < n; ++i) s += p[i];
  return s;
}

// Σ (p[i] - mean)² over [0, n).
LOOM_NN_INLINE float sq_dev_span(const float* p, int64_t n, float mean) {
  v8f m, a, b, x, y;
  splat8(m, mean);
  splat8(a, 0.0f);
  b = a;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    load8(x, p + i);
    load8(y, p + i + 8);
    x -= m;
    y -= m;
    a += x * x;
    b += y * y;
  }
  a += b;
  float s = 0;
  for (int l = 0; l < 8; ++l) s += a[l];
  for (; i < n; ++i) s += (p[i] - mean) * (p[i] - mean);
  return s;
}

}  // namespace loom::cpu::nnmath

#undef LOOM_NN_INLINE
