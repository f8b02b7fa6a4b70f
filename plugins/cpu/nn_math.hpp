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

// The nn row loops are compiled for AVX-512 too: the vector types below are
// 64 bytes wide, one zmm register there.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LOOM_NN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LOOM_NN_CLONES
#endif

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

// Sixteen floats: one zmm register in the AVX-512 clone, two ymm in the
// AVX2 one, four xmm in the baseline one. The spans below are written with it because GCC does not
// vectorise a float max or sum over scalar lanes by itself (it may not
// reassociate), so the lane order is spelled out: two vector accumulators,
// combined, then the lanes in order, then the tail. That order depends only
// on n, never on threads.
typedef float vf __attribute__((vector_size(64)));
inline constexpr int kVL = 16;  // lanes

// Out-parameters: returning a vector by value would change the ABI between
// the clones (and GCC warns of it).
LOOM_NN_INLINE void loadv(vf& v, const float* p) { std::memcpy(&v, p, sizeof v); }
LOOM_NN_INLINE void splatv(vf& v, float x) { v = vf{} + x; }

// The max of p[0, n) (-inf when n = 0). A NaN may or may not win, which
// softmax does not mind: the shift is arbitrary and a NaN row still sums
// to NaN.
LOOM_NN_INLINE float max_span(const float* p, int64_t n) {
  vf a, b, x, y;
  splatv(a, kNegInfF);
  b = a;
  int64_t i = 0;
  for (; i + 2 * kVL <= n; i += 2 * kVL) {
    loadv(x, p + i);
    loadv(y, p + i + kVL);
    a = x > a ? x : a;
    b = y > b ? y : b;
  }
  a = b > a ? b : a;
  float m = kNegInfF;
  for (int l = 0; l < kVL; ++l) m = a[l] > m ? a[l] : m;
  for (; i < n; ++i) m = p[i] > m ? p[i] : m;
  return m;
}

// Σ p[0, n).
LOOM_NN_INLINE float sum_span(const float* p, int64_t n) {
  vf a, b, x, y;
  splatv(a, 0.0f);
  b = a;
  int64_t i = 0;
  for (; i + 2 * kVL <= n; i += 2 * kVL) {
    loadv(x, p + i);
    loadv(y, p + i + kVL);
    a += x;
    b += y;
  }
  a += b;
  float s = 0;
  for (int l = 0; l < kVL; ++l) s += a[l];
  for (; i < n; ++i) s += p[i];
  return s;
}

// Σ (p[i] - mean)² over [0, n).
LOOM_NN_INLINE float sq_dev_span(const float* p, int64_t n, float mean) {
  vf m, a, b, x, y;
  splatv(m, mean);
  splatv(a, 0.0f);
  b = a;
  int64_t i = 0;
  for (; i + 2 * kVL <= n; i += 2 * kVL) {
    loadv(x, p + i);
    loadv(y, p + i + kVL);
    x -= m;
    y -= m;
    a += x * x;
    b += y * y;
  }
  a += b;
  float s = 0;
  for (int l = 0; l < kVL; ++l) s += a[l];
  for (; i < n; ++i) s += (p[i] - mean) * (p[i] - mean);
  return s;
}

typedef int32_t vi __attribute__((vector_size(64)));

// exp_f on all lanes at once, the same operations in the same order (so
// the same bits as exp_f): GCC does not vectorise exp_f's bit tricks inside
// a loop on its own. Vector casts reinterpret bits.
LOOM_NN_INLINE void expv(vf& y, const vf& x) {
  vf lo, hi, shifter, zero;
  splatv(lo, -87.3f);
  splatv(hi, 88.0f);
  splatv(shifter, 0x1.8p23f);
  splatv(zero, 0.0f);
  vf xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  const vf t = xc * 1.44269504088896341f + shifter;
  const vf k = t - shifter;
  const vi ki = (vi)t - (vi)shifter;
  const vf r = (xc - k * 0.693359375f) - k * -2.12194440e-4f;
  vf p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const vf er = p * (r * r) + r + 1.0f;
  const vf z = er * (vf)((ki + 127) << 23);
  y = x < lo ? zero : z;
  y = x != x ? x : y;
}

// y[i] = exp(x[i] - m) for i in [0, n); returns their sum (lane order as
// sum_span). y may be x.
LOOM_NN_INLINE float exp_shift_sum(const float* x, float* y, int64_t n, float m) {
  vf vm, a, b, x0, x1, e0, e1;
  splatv(vm, m);
  splatv(a, 0.0f);
  b = a;
  int64_t i = 0;
  for (; i + 2 * kVL <= n; i += 2 * kVL) {
    loadv(x0, x + i);
    loadv(x1, x + i + kVL);
    x0 -= vm;
    x1 -= vm;
    expv(e0, x0);
    expv(e1, x1);
    std::memcpy(y + i, &e0, sizeof e0);
    std::memcpy(y + i + kVL, &e1, sizeof e1);
    a += e0;
    b += e1;
  }
  a += b;
  float s = 0;
  for (int l = 0; l < kVL; ++l) s += a[l];
  for (; i < n; ++i) s += (y[i] = exp_f(x[i] - m));
  return s;
}

}  // namespace loom::cpu::nnmath

#undef LOOM_NN_INLINE
