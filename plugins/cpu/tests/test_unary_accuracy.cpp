// Whole-range accuracy of the floating unary ops against long double
// references: every float16 and every bfloat16 value, and 2^17 float32 bit
// patterns over all exponents (plus a set below 2^20 only, where sin, cos
// and tan take their vectorised path in whole blocks). The float paths
// compute in double inside, so only the final rounding counts — two for the
// 16-bit types (to float, then to the dtype): within one ulp; tanh computes
// in float lanes (its float32 tolerance is the case's f32_ulps).
#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "unary_test_support.hpp"

#include <cstring>

using namespace loom_test;
using namespace loom_test::unary;

namespace {

std::vector<Case> floating_cases() {
  std::vector<Case> v = float_cases();
  for (Case& c : activation_cases()) v.push_back(std::move(c));
  return v;
}

// Tensor of n elements of dtype dt whose bit patterns are pattern(i).
template <class U, class P>
Tensor from_bits(int32_t dt, int64_t n, P pattern) {
  const Tensor t = make(dt, {n});
  char* base = reinterpret_cast<char*>(t.store->data());
  for (int64_t i = 0; i < n; ++i) {
    const U b = pattern(i);
    std::memcpy(base + i * static_cast<int64_t>(sizeof(U)), &b, sizeof(U));
  }
  return t;
}

// A deterministic 32-bit stream (splitmix64's finaliser).
uint32_t mix(uint64_t i) {
  uint64_t z = i * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

void check_all(const Tensor& in) {
  for (const Case& c : floating_cases()) {
    INFO(c.op << " " << c.label << " " << loom::plugin::dtype_name(in.dtype));
    check_call(c, in, make(in.dtype, in.shape));  // an ulp; tanh's float32 1.5
  }
}

}  // namespace

TEST_CASE("every float16 and bfloat16 input is within an ulp", "[unary][cpu][accuracy]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16})
    check_all(from_bits<uint16_t>(dt, 65536, [](int64_t i) { return static_cast<uint16_t>(i); }));
}

TEST_CASE("float32 inputs over every exponent are within an ulp", "[unary][cpu][accuracy]") {
  check_all(from_bits<uint32_t>(LOOM_DTYPE_FLOAT32, 1 << 17, [](int64_t i) { return mix(i); }));
}

TEST_CASE("float32 inputs below 2^20 are within an ulp (vectorised trig blocks)",
          "[unary][cpu][accuracy]") {
  // Exponent field at most 127 + 19: |x| < 2^20, so no block needs libm.
  check_all(from_bits<uint32_t>(LOOM_DTYPE_FLOAT32, 1 << 16, [](int64_t i) {
    const uint32_t r = mix(i);
    const uint32_t exp = (r >> 23 & 0xff) % (127 + 20);
    return (r & 0x807fffffu) | exp << 23;
  }));
}
