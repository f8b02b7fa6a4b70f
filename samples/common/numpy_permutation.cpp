#include "numpy_permutation.h"

#include <array>
#include <cstddef>
#include <utility>

namespace loom_samples {
namespace {

// --- SeedSequence (numpy/random/bit_generator.pyx) --------------------------
constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875;
constexpr uint32_t kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
constexpr uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
constexpr int kXShift = 16;
constexpr size_t kPoolSize = 4;

uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  return value ^ (value >> kXShift);
}

uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t result = kMixMultL * x - kMixMultR * y;
  return result ^ (result >> kXShift);
}

// The entropy pool of SeedSequence(seed) for an integer seed.
std::array<uint32_t, kPoolSize> seed_pool(uint64_t seed) {
  std::vector<uint32_t> entropy;  // the seed as little-endian 32-bit words
  do {
    entropy.push_back(static_cast<uint32_t>(seed));
    seed >>= 32;
  } while (seed != 0);
  std::array<uint32_t, kPoolSize> pool{};
  uint32_t hash_const = kInitA;
  for (size_t i = 0; i < kPoolSize; ++i)
    pool[i] = hashmix(i < entropy.size() ? entropy[i] : 0, hash_const);
  for (size_t src = 0; src < kPoolSize; ++src)
    for (size_t dst = 0; dst < kPoolSize; ++dst)
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
  for (size_t src = kPoolSize; src < entropy.size(); ++src)
    for (size_t dst = 0; dst < kPoolSize; ++dst)
      pool[dst] = mix(pool[dst], hashmix(entropy[src], hash_const));
  return pool;
}

// SeedSequence.generate_state(4, np.uint64): 8 words, paired little-endian.
std::array<uint64_t, 4> generate_state(const std::array<uint32_t, kPoolSize>& pool) {
  std::array<uint64_t, 4> out{};
  uint32_t hash_const = kInitB;
  for (size_t i = 0; i < 8; ++i) {
    uint32_t v = pool[i % kPoolSize] ^ hash_const;
    hash_const *= kMultB;
    v *= hash_const;
    v ^= v >> kXShift;
    out[i / 2] |= static_cast<uint64_t>(v) << (32 * (i % 2));
  }
  return out;
}

// --- PCG64 (XSL-RR 128/64, numpy/random/src/pcg64) --------------------------
using u128 = unsigned __int128;

class Pcg64 {
 public:
  explicit Pcg64(uint64_t seed) {
    auto words = generate_state(seed_pool(seed));
    u128 initstate = (u128(words[0]) << 64) | words[1];
    u128 initseq = (u128(words[2]) << 64) | words[3];
    inc_ = (initseq << 1) | 1;
    state_ = 0;
    step();
    state_ += initstate;
    step();
  }
  uint64_t next64() {
    step();
    uint64_t hi = static_cast<uint64_t>(state_ >> 64), lo = static_cast<uint64_t>(state_);
    unsigned rot = static_cast<unsigned>(hi >> 58);
    uint64_t x = hi ^ lo;
    return (x >> rot) | (x << ((64 - rot) & 63));
  }
  // numpy buffers the upper half of a 64-bit draw for the next 32-bit one.
  uint32_t next32() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    uint64_t v = next64();
    spare_ = static_cast<uint32_t>(v >> 32);
    has_spare_ = true;
    return static_cast<uint32_t>(v);
  }

 private:
  void step() {
    const u128 mult = (u128(2549297995355413924ULL) << 64) | 4865540595714422341ULL;
    state_ = state_ * mult + inc_;
  }
  u128 state_ = 0, inc_ = 0;
  bool has_spare_ = false;
  uint32_t spare_ = 0;
};

// numpy's random_interval: uniform in [0, max] by masked rejection.
uint64_t random_interval(Pcg64& rng, uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = max;
  for (int s = 1; s <= 32; s *= 2) mask |= mask >> s;
  uint64_t value;
  if (max <= 0xffffffffULL) {
    while ((value = rng.next32() & mask) > max) {
    }
  } else {
    while ((value = rng.next64() & mask) > max) {
    }
  }
  return value;
}

}  // namespace

std::vector<int64_t> numpy_permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n < 0 ? 0 : n));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  Pcg64 rng(seed);
  for (size_t i = order.size(); i-- > 1;)  // Generator.shuffle, last index first
    std::swap(order[i], order[random_interval(rng, i)]);
  return order;
}

}  // namespace loom_samples
