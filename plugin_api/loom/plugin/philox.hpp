// loom/plugin/philox.hpp — the counter-based generator every device shares.
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11; the same generator as Random123 and cuRAND), plus the exact mapping
// from its output words to uniform and normal samples that
// docs/kernel_conventions.md ("Random numbers") defines. Because the result
// depends only on (seed, offset + logical index), every device, thread count
// and memory layout draws the same numbers; putting the formulas here, in one
// header usable from host and CUDA code, is what keeps devices in agreement.
//
// Header-only, depends on nothing but <cmath>/<cstdint>.
#pragma once

#include <loom/plugin/host_device.hpp>

#include <cmath>
#include <cstdint>


namespace loom::plugin {

// Four 32-bit words: a Philox counter or one output block.
struct Philox4x32 {
  uint32_t w[4];
};

namespace detail {
inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1

LOOM_HD inline void philox_round(uint32_t c[4], uint32_t k0, uint32_t k1) {
  const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c[0];
  const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c[2];
  const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
  const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
  const uint32_t n0 = hi1 ^ c[1] ^ k0;
  const uint32_t n2 = hi0 ^ c[3] ^ k1;
  c[0] = n0;
  c[1] = lo1;
  c[2] = n2;
  c[3] = lo0;
}
}  // namespace detail

// One Philox4x32-10 block: 10 rounds, the key bumped between rounds.
LOOM_HD inline Philox4x32 philox4x32_10(Philox4x32 counter, uint32_t key0,
                                                 uint32_t key1) {
  uint32_t c[4] = {counter.w[0], counter.w[1], counter.w[2], counter.w[3]};
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      key0 += detail::kPhiloxW0;
      key1 += detail::kPhiloxW1;
    }
    detail::philox_round(c, key0, key1);
  }
  return Philox4x32{{c[0], c[1], c[2], c[3]}};
}

// The block for logical element `index` of a call with generator state
// (seed, offset): key = seed (low word, high word), counter = offset + index
// as 64 bits in the first two words, the other two zero.
LOOM_HD inline Philox4x32 philox_for_element(uint64_t seed, uint64_t offset,
                                                      uint64_t index) {
  const uint64_t ctr = offset + index;  // wraps modulo 2^64, by definition
  Philox4x32 c{{static_cast<uint32_t>(ctr), static_cast<uint32_t>(ctr >> 32), 0u, 0u}};
  return philox4x32_10(c, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// ------------------------------------------------------- word -> sample ---
// 16- and 32-bit floats use 24 bits of one word and compute in float;
// float64 uses 53 bits of two words and computes in double.

// [0, 1) with 24 bits: (w >> 8) * 2^-24. Exact in float.
LOOM_HD inline float uniform24(uint32_t w) {
  return static_cast<float>(w >> 8) * 5.9604644775390625e-8f;
}
// (0, 1] with 24 bits: ((w >> 8) + 1) * 2^-24; never 0, so log() is finite.
LOOM_HD inline float uniform24_open0(uint32_t w) {
  return static_cast<float>((w >> 8) + 1u) * 5.9604644775390625e-8f;
}
// [0, 1) with 53 bits from (hi, lo): ((hi << 32 | lo) >> 11) * 2^-53.
LOOM_HD inline double uniform53(uint32_t hi, uint32_t lo) {
  const uint64_t x = (static_cast<uint64_t>(hi) << 32) | lo;
  return static_cast<double>(x >> 11) * 1.1102230246251565e-16;
}
// (0, 1] with 53 bits.
LOOM_HD inline double uniform53_open0(uint32_t hi, uint32_t lo) {
  const uint64_t x = (static_cast<uint64_t>(hi) << 32) | lo;
  return static_cast<double>((x >> 11) + 1u) * 1.1102230246251565e-16;
}

// uniform_ for 16/32-bit floats: from + (to - from) * u, in float.
LOOM_HD inline float uniform_sample_f32(const Philox4x32& b, float from, float to) {
  return from + (to - from) * uniform24(b.w[0]);
}
// uniform_ for float64.
LOOM_HD inline double uniform_sample_f64(const Philox4x32& b, double from, double to) {
  return from + (to - from) * uniform53(b.w[0], b.w[1]);
}

// normal_ for 16/32-bit floats: Box-Muller with u1 in (0, 1] from w0 and
// u2 in [0, 1) from w1, in float.
LOOM_HD inline float normal_sample_f32(const Philox4x32& b, float mean, float std) {
  const float u1 = uniform24_open0(b.w[0]);
  const float u2 = uniform24(b.w[1]);
  const float two_pi = 6.2831853071795864769f;
  return mean + std * (std::sqrt(-2.0f * std::log(u1)) * std::cos(two_pi * u2));
}
// normal_ for float64: u1 from (w0, w1), u2 from (w2, w3), 53 bits each.
LOOM_HD inline double normal_sample_f64(const Philox4x32& b, double mean, double std) {
  const double u1 = uniform53_open0(b.w[0], b.w[1]);
  const double u2 = uniform53(b.w[2], b.w[3]);
  const double two_pi = 6.2831853071795864769;
  return mean + std * (std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2));
}

}  // namespace loom::plugin
