// Elementary functions of float arguments for the unary kernels, written so
// GCC vectorises them: no branches (both sides of a choice are computed and
// one is selected), no libm calls, integer work only on 64-bit lanes, and
// int <-> double conversions done with the "shifter" trick because AVX2 has
// no 64-bit integer conversions.
//
// Each works in double on a float input: every float converts exactly, float
// subnormals become normal doubles, and with errors below ~1e-12 relative
// the final rounding to float is correct but for rare near-ties — at least
// as accurate as glibc's float functions. No FMA and no libm, so the AVX2
// and baseline clones give identical bits. float64 tensors use <cmath>.
// Polynomials are Taylor series unless stated; ranges are written at each.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

// Forced inline: these are the bodies of vectorised loops, and a call
// (GCC declines to inline exp_d into its many users) stops vectorisation.
#define LOOM_VMATH [[gnu::always_inline]] inline

namespace loom::cpu::vmath {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kLn2 = 0x1.62e42fefa39efp-1;
inline constexpr double kLn2Hi = 0x1.62e42fee00000p-1;  // 32 bits: k * kLn2Hi is exact
inline constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
inline constexpr double kLog2e = 0x1.71547652b82fep+0;
inline constexpr double kSqrt2 = 1.4142135623730951;
inline constexpr double kSqrtHalf = 0.7071067811865476;
inline constexpr double kSqrt2OverPi = 0.7978845608028654;
inline constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
// pi/2 in three parts (fdlibm's); the first two have 33 bits, so k * part
// is exact for |k| < 2^20.
inline constexpr double kPio2_1 = 0x1.921fb54400000p+0;
inline constexpr double kPio2_2 = 0x1.0b4611a600000p-34;
inline constexpr double kPio2_2t = 0x1.3198a2e037073p-69;

// Adding kShifter to |v| < 2^51 rounds v to an integer (ties to even) and
// leaves it in the low mantissa bits: bits(v + kShifter) = bits(kShifter) + round(v).
inline constexpr double kShifter = 0x1.8p52;

LOOM_VMATH uint64_t bits(double x) { return std::bit_cast<uint64_t>(x); }
LOOM_VMATH double from_bits(uint64_t b) { return std::bit_cast<double>(b); }
LOOM_VMATH double round_int(double v) { return (v + kShifter) - kShifter; }

// c[0] x^(N-1) + ... + c[N-1]; the fixed trip count unrolls completely.
template <int N>
LOOM_VMATH double horner(double x, const double (&c)[N]) {
  double p = c[0];
  for (int i = 1; i < N; ++i) p = p * x + c[i];
  return p;
}

// 2^k for an integral k in [-1022, 1023], built from its bits.
LOOM_VMATH double pow2i(double k) { return from_bits(bits(k + (kShifter + 1023.0)) << 52); }

// x * 2^k for an integral |k| <= 2044, in two factors that are each normal,
// so overflow gives inf and underflow 0 exactly as exp would.
LOOM_VMATH double scale(double x, double k) {
  const double k1 = round_int(k * 0.5);
  return x * pow2i(k1) * pow2i(k - k1);
}

// e^r for |r| <= ln2/2 (+ rounding): Taylor to r^11, error < 1e-14.
LOOM_VMATH double exp_poly(double r) {
  static constexpr double c[] = {1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320,
                                 1.0 / 5040,     1.0 / 720,     1.0 / 120,    1.0 / 24,
                                 1.0 / 6,        0.5,           1.0,          1.0};
  return horner(r, c);
}

// Arguments are clamped to +-1100 (beyond, e^x is 0 or inf in double) so
// k = round(x / ln2) stays within scale()'s range; NaN passes the clamp.
LOOM_VMATH double clamp_exp_arg(double x) {
  return x < -1100.0 ? -1100.0 : (x > 1100.0 ? 1100.0 : x);
}

LOOM_VMATH double exp_d(double x) {
  const double xc = clamp_exp_arg(x);
  const double k = round_int(xc * kLog2e);
  const double r = (xc - k * kLn2Hi) - k * kLn2Lo;
  const double y = scale(exp_poly(r), k);
  return x != x ? x : y;
}

// Exact for integral x: the reduced argument is then 0.
LOOM_VMATH double exp2_d(double x) {
  const double xc = clamp_exp_arg(x);
  const double k = round_int(xc);
  const double y = scale(exp_poly((xc - k) * kLn2), k);
  return x != x ? x : y;
}

// Near 0, e^x - 1 cancels: there use Taylor of (e^x - 1)/x to x^12 (error
// < 1e-16 below 0.35), times x so that -0 stays -0.
LOOM_VMATH double expm1_d(double x) {
  static constexpr double c[] = {1.0 / 6227020800,
                                 1.0 / 479001600,
                                 1.0 / 39916800,
                                 1.0 / 3628800,
                                 1.0 / 362880,
                                 1.0 / 40320,
                                 1.0 / 5040,
                                 1.0 / 720,
                                 1.0 / 120,
                                 1.0 / 24,
                                 1.0 / 6,
                                 0.5,
                                 1.0};
  const double small = horner(x, c) * x;
  return std::fabs(x) < 0.35 ? small : exp_d(x) - 1.0;
}

// For a positive finite x = 2^e * m with m in [sqrt(1/2), sqrt(2)): sets e
// and returns log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.172, as
// 2s(1 + s^2/3 + ... + s^16/17) (error < 1e-15). Other x give garbage that
// log_result() replaces.
LOOM_VMATH double log_mantissa(double x, double& e) {
  static constexpr double c[] = {2.0 / 17, 2.0 / 15, 2.0 / 13, 2.0 / 11, 2.0 / 9,
                                 2.0 / 7,  2.0 / 5,  2.0 / 3,  2.0};
  const uint64_t b = bits(x);
  double m = from_bits((b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
  e = from_bits((b >> 52) | 0x4330000000000000ULL) - (0x1p52 + 1023.0);
  const bool high = m > kSqrt2;
  m = high ? m * 0.5 : m;
  e = high ? e + 1.0 : e;
  const double s = (m - 1.0) / (m + 1.0);
  return s * horner(s * s, c);
}

// `y` where x is positive and finite; log's special values elsewhere.
LOOM_VMATH double log_result(double x, double y) {
  if (x > 0.0 && x < kInf) return y;  // a select after inlining: no branch
  return x == 0.0 ? -kInf : (x == kInf ? kInf : kNaN);
}

LOOM_VMATH double log_d(double x) {
  double e;
  const double m = log_mantissa(x, e);
  return log_result(x, e * kLn2 + m);
}

// e + log2(m): exact for powers of two.
LOOM_VMATH double log2_d(double x) {
  double e;
  const double m = log_mantissa(x, e);
  return log_result(x, e + m * kLog2e);
}

// u = 1 + x rounds; log(u) is log1p of d = u - 1 exactly, and scaling by
// x/d corrects it to log1p(x) (Goldberg's trick).
LOOM_VMATH double log1p_d(double x) {
  const double u = 1.0 + x, d = u - 1.0;
  const double y = d == 0.0 ? x : log_d(u) * (x / d);
  return x == kInf ? x : y;
}

// ------------------------------------------------------------ sin, cos ---

// The reduction below is accurate for |x| < kTrigFastMax; beyond it the
// kernels call libm (rare: such arguments are noise for float anyway).
inline constexpr double kTrigFastMax = 0x1p20;

// sin and cos of x = k*pi/2 + r, |r| <= pi/4: returns r and sets q = k mod 4
// (the low bits of the shifted k, two's complement). inf and NaN give NaN.
LOOM_VMATH double reduce_pio2(double x, uint64_t& q) {
  const double t = x * kTwoOverPi + kShifter;
  const double k = t - kShifter;
  q = bits(t) & 3;
  return ((x - k * kPio2_1) - k * kPio2_2) - k * kPio2_2t;
}

// Taylor to r^15 and r^14 on |r| <= pi/4: errors < 1e-15.
LOOM_VMATH double sin_poly(double r) {
  static constexpr double c[] = {
      -1.0 / 1307674368000, 1.0 / 6227020800, -1.0 / 39916800, 1.0 / 362880,
      -1.0 / 5040,          1.0 / 120,        -1.0 / 6};
  const double z = r * r;
  return r + r * (z * horner(z, c));
}
LOOM_VMATH double cos_poly(double r) {
  static constexpr double c[] = {
      -1.0 / 87178291200, 1.0 / 479001600, -1.0 / 3628800, 1.0 / 40320, -1.0 / 720, 1.0 / 24, -0.5};
  const double z = r * r;
  return 1.0 + z * horner(z, c);
}

// sin(x) for q = 0, cos(x) for q = 1 (sin(x + pi/2)). x = 0 returns x to
// keep the sign of zero.
LOOM_VMATH double sin_shifted(double x, uint64_t shift) {
  uint64_t q;
  const double r = reduce_pio2(x, q);
  q += shift;
  const double s = sin_poly(r), c = cos_poly(r);
  const double v = (q & 1) ? c : s;
  const double y = (q & 2) ? -v : v;
  return shift == 0 && x == 0.0 ? x : y;
}
LOOM_VMATH double sin_d(double x) { return sin_shifted(x, 0); }
LOOM_VMATH double cos_d(double x) { return sin_shifted(x, 1); }

LOOM_VMATH double tan_d(double x) {
  uint64_t q;
  const double r = reduce_pio2(x, q);
  const double s = sin_poly(r), c = cos_poly(r);
  const double y = (q & 1) ? -c / s : s / c;
  return x == 0.0 ? x : y;
}

// ------------------------------------------------------ tanh, sigmoid ---

// tanh|x| = expm1(2|x|) / (expm1(2|x|) + 2); |x| > 20 is 1 in double.
LOOM_VMATH double tanh_d(double x) {
  const double a = std::fabs(x);
  const double e = expm1_d(2.0 * (a > 20.0 ? 20.0 : a));
  return std::copysign(e / (e + 2.0), x);
}

// 1/(1 + e^-x): e^-x overflows to inf for very negative x, giving 0.
LOOM_VMATH double sigmoid_d(double x) { return 1.0 / (1.0 + exp_d(-x)); }

// ----------------------------------------------------------- erf, erfc ---

struct ErfPair {
  double erf, erfc;
  double gauss;  // e^(-a^2), which erfc's form computes anyway (gelu's slope reuses it)
};

// erf and erfc of a >= 0, each with relative error < 1e-11. Below 1:
// erf(a)/a as a polynomial in a^2. From 1 on: erfc(a) = t e^(-a^2) G(t) with
// t = 1/(1 + a/2) in (0, 2/3]. Both are mpmath.chebyfit fits (degrees 9 and
// 13; fit errors 2e-14 and 2e-12).
LOOM_VMATH ErfPair erf_pos(double a) {
  static constexpr double small_c[] = {-1.0469110332151208e-07, 1.5306373163641084e-06,
                                       -1.4795031400662045e-05, 0.00012046261269779797,
                                       -0.0008547933736519633,  0.0052239671935439,
                                       -0.026866169050599326,   0.11283791658548713,
                                       -0.37612638902808615,    1.128379167095494};
  static constexpr double big_c[] = {
      -0.09635685682289193,  0.4115188001743359,   -0.693475237580037,  0.5359048421559357,
      -0.1605637602690688,   0.056619558969711575, -0.0649836304864969, -0.05532267963129757,
      -0.004513749102540034, 0.08375077235592698,  0.17630923193448358, 0.24683293998252315,
      0.2820947918204565,    0.28209479177379293};
  const double small = a * horner(a * a, small_c);
  const double t = 1.0 / (1.0 + 0.5 * a);
  const double gauss = exp_d(-(a * a));
  const double big = t * gauss * horner(t, big_c);
  const bool below = a < 1.0;
  return {below ? small : 1.0 - big, below ? 1.0 - small : big, gauss};
}

LOOM_VMATH double erf_d(double x) {
  const double y = std::copysign(erf_pos(std::fabs(x)).erf, x);
  return x != x ? x : y;
}

// x Phi(x) = x/2 erfc(-x/sqrt2): for x < 0 erfc is used directly, so there
// is no cancellation in 1 + erf. -inf gives NaN, as the formula does.
LOOM_VMATH double gelu_erf_d(double x) {
  const ErfPair p = erf_pos(std::fabs(x) * kSqrtHalf);
  return 0.5 * x * (x < 0.0 ? p.erfc : 1.0 + p.erf);
}

// x/2 (1 + tanh(y)) = x sigmoid(2y), y = sqrt(2/pi)(x + 0.044715 x^3):
// no cancellation for x < 0.
LOOM_VMATH double gelu_tanh_d(double x) {
  const double y = kSqrt2OverPi * (x + 0.044715 * (x * x * x));
  return x / (1.0 + exp_d(-2.0 * y));
}

}  // namespace loom::cpu::vmath

#undef LOOM_VMATH
