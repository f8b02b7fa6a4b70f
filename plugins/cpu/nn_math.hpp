// Float-precision helpers for the nn kernels (softmax, log_softmax,
// layer_norm, batch_norm, the recurrent cells) and the tanh op: a
// branch-free float exp and tanh, and vector max/sum/exp-sum of a
// contiguous float span, written with GCC vector extensions.
//
// unary_math.hpp's exp works in double (four lanes) so that the unary ops
// round correctly; softmax only needs a relative error of a few ulp, and
// its exponentials are the hot loop, so it takes this float one instead.
//
// The span functions take the vector width in bytes, B, as a template
// argument, and each kernel is compiled three times with the width native
// to the instruction set (LOOM_NN_ISA_VARIANTS): 64 for AVX-512, 32 for
// AVX2, 16 for baseline x86-64. A vector wider than the target's registers
// is not split cleanly by GCC (its selects become scalar code, 5x slower),
// which is why this is not a plain target_clones over one width.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <limits>

#define LOOM_NN_INLINE [[gnu::always_inline]] inline

namespace loom::cpu::nnmath {

// The type the nn kernels compute a dtype-type T in: double for float64,
// float for float32 and the 16-bit floats (through float buffers).
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

inline constexpr float kNegInfF = -std::numeric_limits<float>::infinity();

// e^x for x <= 0 (softmax calls it on x - max), error about 1 ulp (Cephes
// expf: k = round(x / ln2), x = k ln2 + r with ln2 in two parts, a degree-6
// polynomial for e^r, then 2^k from its bits). Below -87.3 the true result
// is under float's smallest normal and this returns exactly 0, so masked
// (-inf) entries give 0; NaN propagates through the arithmetic. No clamp:
// far below -87.3 the intermediate values are garbage that the final
// select discards, and x > 0 never reaches here (x > 88 would overflow
// the exponent bits).
LOOM_NN_INLINE float exp_f(float x) {
  constexpr float kShifter = 0x1.8p23f;  // x + kShifter rounds to an integer in the low bits
  const float xc = x;
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
  return x < -87.3f ? 0.0f : y;
}

// tanh in float arithmetic, branch-free: Cephes tanhf's odd polynomial
// below |x| = 0.625 (where 1 - 2/(e^2|x| + 1) would cancel), else
// 1 - 2e/(1 + e) with e = exp_f(-2|x|), |x| clamped to 10 (tanh rounds to
// 1 from 9.01 on); the sign is x's, so -0 stays -0 and NaN stays NaN.
// Measured over every finite float32: at most 1.46 ulp from the true value,
// all but 71142 of 2^31 within 1 ulp (those just above 0.625), where the double
// evaluation the other unary ops take is within 0.5 ulp but 4x slower.
// The tanh op on float32/16-bit floats and the recurrent cells' gates both
// use it, so an LSTM's tanh is the tanh op's.
LOOM_NN_INLINE float tanh_f(float x) {
  const float a = std::fabs(x);
  const float z = a * a;
  const float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
                        1.33314422036e-1f) * z - 3.33332819422e-1f) * z * a + a;
  const float e = exp_f(-2.0f * (a > 10.0f ? 10.0f : a));
  const float big = 1.0f - 2.0f * e / (1.0f + e);
  return std::copysign(a < 0.625f ? small : big, x);
}

template <int B>
struct Vec {
  typedef float f __attribute__((vector_size(B)));
  typedef int32_t i __attribute__((vector_size(B)));  // lane masks, bit patterns
  static constexpr int kLanes = B / 4;
};

// Out-parameters: returning a vector by value would change the ABI between
// the ISA variants (and GCC warns of it).
template <class V>
LOOM_NN_INLINE void loadv(V& v, const float* p) { std::memcpy(&v, p, sizeof v); }
template <class V>
LOOM_NN_INLINE void splatv(V& v, float x) { v = V{} + x; }

// The max of p[0, n) (-inf when n = 0). A NaN may or may not win, which
// softmax does not mind: the shift is arbitrary and a NaN row still sums
// to NaN. Two accumulators, combined, then the lanes in order, then the
// tail: the order depends only on n and B, never on threads.
template <int B>
LOOM_NN_INLINE float max_span(const float* p, int64_t n) {
  using V = typename Vec<B>::f;
  constexpr int L = Vec<B>::kLanes;
  V a, b, x, y;
  splatv(a, kNegInfF);
  b = a;
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    loadv(x, p + i);
    loadv(y, p + i + L);
    a = x > a ? x : a;
    b = y > b ? y : b;
  }
  a = b > a ? b : a;
  float m = kNegInfF;
  for (int l = 0; l < L; ++l) m = a[l] > m ? a[l] : m;
  for (; i < n; ++i) m = p[i] > m ? p[i] : m;
  return m;
}

// Σ p[0, n), lane order as max_span.
template <int B>
LOOM_NN_INLINE float sum_span(const float* p, int64_t n) {
  using V = typename Vec<B>::f;
  constexpr int L = Vec<B>::kLanes;
  V a, b, x, y;
  splatv(a, 0.0f);
  b = a;
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    loadv(x, p + i);
    loadv(y, p + i + L);
    a += x;
    b += y;
  }
  a += b;
  float s = 0;
  for (int l = 0; l < L; ++l) s += a[l];
  for (; i < n; ++i) s += p[i];
  return s;
}

// Σ (p[i] - mean)² over [0, n).
template <int B>
LOOM_NN_INLINE float sq_dev_span(const float* p, int64_t n, float mean) {
  using V = typename Vec<B>::f;
  constexpr int L = Vec<B>::kLanes;
  V m, a, b, x, y;
  splatv(m, mean);
  splatv(a, 0.0f);
  b = a;
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    loadv(x, p + i);
    loadv(y, p + i + L);
    x -= m;
    y -= m;
    a += x * x;
    b += y * y;
  }
  a += b;
  float s = 0;
  for (int l = 0; l < L; ++l) s += a[l];
  for (; i < n; ++i) s += (p[i] - mean) * (p[i] - mean);
  return s;
}

// Σ g[i] and Σ g[i]·(x[i] - mean) over [0, n), at once (batch_norm's
// backward); lane order as sum_span.
template <int B>
LOOM_NN_INLINE void grad_sums_span(const float* g, const float* x, int64_t n, float mean, float& sum_g,
                                   float& sum_gx) {
  using V = typename Vec<B>::f;
  constexpr int L = Vec<B>::kLanes;
  V m, sg, sgx, gv, xv;
  splatv(m, mean);
  splatv(sg, 0.0f);
  sgx = sg;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    loadv(gv, g + i);
    loadv(xv, x + i);
    sg += gv;
    sgx += gv * (xv - m);
  }
  float a = 0, b = 0;
  for (int l = 0; l < L; ++l) {
    a += sg[l];
    b += sgx[l];
  }
  for (; i < n; ++i) {
    a += g[i];
    b += g[i] * (x[i] - mean);
  }
  sum_g = a;
  sum_gx = b;
}

// exp_f on all lanes at once, the same operations in the same order: GCC
// does not vectorise exp_f's bit tricks inside a loop on its own. Vector
// casts reinterpret bits.
template <class V, class VI>
LOOM_NN_INLINE void expv(V& y, const V& x) {
  V lo, shifter, zero;
  splatv(lo, -87.3f);
  splatv(shifter, 0x1.8p23f);
  splatv(zero, 0.0f);
  const V xc = x;
  const V t = xc * 1.44269504088896341f + shifter;
  const V k = t - shifter;
  const VI ki = (VI)t - (VI)shifter;
  const V r = (xc - k * 0.693359375f) - k * -2.12194440e-4f;
  V p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const V er = p * (r * r) + r + 1.0f;
  const V z = er * (V)((ki + 127) << 23);
  y = x < lo ? zero : z;
}

// y[i] = exp(x[i] - m) for i in [0, n); returns their sum (lane order as
// sum_span). y may be x.
template <int B>
LOOM_NN_INLINE float exp_shift_sum(const float* x, float* y, int64_t n, float m) {
  using V = typename Vec<B>::f;
  using VI = typename Vec<B>::i;
  constexpr int L = Vec<B>::kLanes;
  V vm, a, b, x0, x1, e0, e1;
  splatv(vm, m);
  splatv(a, 0.0f);
  b = a;
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    loadv(x0, x + i);
    loadv(x1, x + i + L);
    x0 -= vm;
    x1 -= vm;
    expv<V, VI>(e0, x0);
    expv<V, VI>(e1, x1);
    std::memcpy(y + i, &e0, sizeof e0);
    std::memcpy(y + i + L, &e1, sizeof e1);
    a += e0;
    b += e1;
  }
  a += b;
  float s = 0;
  for (int l = 0; l < L; ++l) s += a[l];
  for (; i < n; ++i) s += (y[i] = exp_f(x[i] - m));
  return s;
}

// The widest of three variants of a kernel the CPU runs (checked by the
// caller once, into a static). Each variant is a function marked
// LOOM_NN_TARGET("avx512f") / ("avx2") / nothing that calls an
// always_inline body with B = 64 / 32 / 16.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// LOOM_CPU_NN_ISA=avx2 or =base caps the choice, so the tests can run the
// narrower variants on a machine that has wider ones.
template <class F>
inline F pick_isa(F avx512, F avx2, F base) {
  __builtin_cpu_init();
  const char* cap = std::getenv("LOOM_CPU_NN_ISA");
  const bool allow512 = !cap || std::strcmp(cap, "avx512") == 0;
  const bool allow256 = allow512 || std::strcmp(cap, "avx2") == 0;
  if (allow512 && __builtin_cpu_supports("avx512f")) return avx512;
  if (allow256 && __builtin_cpu_supports("avx2")) return avx2;
  return base;
}
#define LOOM_NN_TARGET(isa) __attribute__((target(isa)))
#define LOOM_NN_AVX2 "avx2,fma"
#define LOOM_NN_AVX512 "avx512f,fma"
#else
template <class F>
inline F pick_isa(F, F, F base) {
  return base;
}
#define LOOM_NN_TARGET(isa)
#define LOOM_NN_AVX2 ""
#define LOOM_NN_AVX512 ""
#endif

}  // namespace loom::cpu::nnmath

#undef LOOM_NN_INLINE
