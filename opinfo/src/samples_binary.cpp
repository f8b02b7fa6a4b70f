// samples_binary.cpp — elementwise binary and ternary arithmetic: sub, mul,
// div (rounding modes), remainder, fmod, pow, maximum, minimum, atan2, the bitwise
// ops, where and lerp. (add is in samples_basic.cpp; comparisons and logical
// ops in samples_compare.cpp.) In-place forms are derived by the runner.
#include "sample_util.h"

namespace loom::opinfo {
namespace {
using namespace detail;

const uint64_t kNumeric = kFloatDTypes | kIntegerDTypes;

// A sample mixing dtypes, so the result type is promoted: the sample's dtype
// against int64 (floats) or float32 (integers and bool).
Sample mixed_dtypes(const SampleContext& c, double lo, double hi) {
  const DType other = is_float(c) ? DType::Int64 : DType::Float32;
  return c.call("mixed dtypes", {c.tensor({3, 4}, lo, hi), c.tensor({4}, lo, hi, other)});
}

// Ops where an integer divisor of zero is an error: integer divisors are
// drawn away from zero (both signs where the dtype has them); float
// divisors include zero in the edge-values sample.
Samples division_samples(const SampleContext& c, const std::vector<Value>& values) {
  if (is_float(c)) return binary_samples(c, -10, 10, -4, 4, values);
  Samples v = binary_samples(c, -20, 20, 1, 6, values);
  std::erase_if(v, [](const Sample& s) { return s.label == "edge values"; });
  v.push_back(c.call("edge values by small", {c.edge_values(16), c.tensor({16}, 1, 6)}, values));
  if (is_signed(c.dtype())) v.push_back(c.call("negative divisor", {c.tensor({4, 5}, -20, 20), c.tensor({4, 5}, -6, -1)}, values));
  return v;
}

LOOM_OP_SAMPLES("sub", {
    .dtypes = kNumeric,
    .make = [](const SampleContext& c) {
      Samples v = binary_samples(c, -3, 3, -3, 3);
      v.push_back(c.call("alpha=3", {c.tensor({6}), c.tensor({6})}, {I(3)}).for_gradcheck());
      if (is_float(c)) v.push_back(c.call("alpha=-0.5", {c.tensor({6}), c.tensor({6})}, {F(-0.5)}).for_gradcheck());
      return v;
    }})

// The shape set plus a sample mixing dtypes.
Samples promoting_samples(const SampleContext& c) {
  Samples v = binary_samples(c, -3, 3, -3, 3);
  v.push_back(mixed_dtypes(c, -3, 3));
  return v;
}

LOOM_OP_SAMPLES("mul", {.dtypes = kAllDTypes, .make = [](const SampleContext& c) { return promoting_samples(c); }})

LOOM_OP_SAMPLES("div", {
    .dtypes = kAllDTypes,
    .reference_in_double = false,  // floor/trunc of a half-precision quotient
    .make = [](const SampleContext& c) {
      Samples v = is_float(c) ? binary_samples(c, -10, 10, -4, 4) : Samples{};
      if (!is_float(c)) v.push_back(c.call("true division of integers", {c.tensor({4, 5}, -20, 20), c.tensor({4, 5}, 1, 6)}));
      if (c.dtype() == DType::Bool) return v;  // rounding division rejects bool
      for (const char* mode : {"trunc", "floor"})
        for (Sample s : division_samples(c, {S(mode)})) {
          s.label += std::string(", rounding_mode=") + mode;
          v.push_back(std::move(s));
        }
      return v;
    }})

LOOM_OP_SAMPLES("remainder", {
    .dtypes = kNumeric,
    .reference_in_double = false,
    .make = [](const SampleContext& c) { return division_samples(c, {}); }})

LOOM_OP_SAMPLES("fmod", {
    .dtypes = kNumeric,
    .reference_in_double = false,
    .make = [](const SampleContext& c) { return division_samples(c, {}); }})

LOOM_OP_SAMPLES("pow", {
    .dtypes = kNumeric,
    .make = [](const SampleContext& c) {
      if (!is_float(c)) {
        // Small non-negative exponents: a negative integer exponent is an
        // error and a huge one would take long.
        Samples v = binary_samples(c, -4, 4, 0, 5);
        std::erase_if(v, [](const Sample& s) { return s.label == "edge values"; });
        v.push_back(c.call("edge values base", {c.edge_values(16), c.tensor({16}, 0, 3)}));
        return v;
      }
      // Fractional exponents: bases in the domain (positive), plus the
      // edge-values sample for negative bases, zeros and infinities.
      Samples v = binary_samples(c, 0.1, 3, -2, 2);
      v.push_back(c.call("integral exponents, negative base", {c.tensor({4, 5}, -3, 3), c.tensor({4, 5}, -3, 4).floor()}));
      return v;
    }})

LOOM_OP_SAMPLES("maximum", {.dtypes = kAllDTypes, .make = [](const SampleContext& c) { return promoting_samples(c); }})
LOOM_OP_SAMPLES("minimum", {.dtypes = kAllDTypes, .make = [](const SampleContext& c) { return promoting_samples(c); }})

LOOM_OP_SAMPLES("atan2", {
    .dtypes = kAllDTypes,
    .make = [](const SampleContext& c) { return binary_samples(c, -3, 3, -3, 3); }})

// Bit ops: integers and bool; the bit pattern is the dtype's own.
#define LOOM_BITWISE_SAMPLES(op)                                                                  \
  LOOM_OP_SAMPLES(#op, {.dtypes = kIntegerDTypes | dtype_bit(DType::Bool),                        \
                        .compare = Compare::Exact,                                                \
                        .reference_in_double = false,                                             \
                        .make = [](const SampleContext& c) { return binary_samples(c, -100, 100, -100, 100); }})
LOOM_BITWISE_SAMPLES(bitwise_and)
LOOM_BITWISE_SAMPLES(bitwise_or)
LOOM_BITWISE_SAMPLES(bitwise_xor)
#undef LOOM_BITWISE_SAMPLES

LOOM_OP_SAMPLES("where", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{
          c.call("same shape", {c.mask({4, 5}), c.tensor({4, 5}), c.tensor({4, 5})}).for_gradcheck(),
          c.call("broadcast all three", {c.mask({3, 1, 1}), c.tensor({1, 4, 1}), c.tensor({5})}).for_gradcheck(),
          c.call("0-d condition", {c.mask({}), c.tensor({2, 3}), c.tensor({2, 3})}).for_gradcheck(),
          c.call("0-d values", {c.mask({2, 3}), c.tensor({}), c.tensor({})}).for_gradcheck(),
          c.call("empty", {c.mask({0, 3}), c.tensor({0, 3}), c.tensor({3})}),
          c.call("large", {c.mask({kLarge + 1}), c.tensor({kLarge + 1}), c.tensor({kLarge + 1})}),
          c.call("edge values", {c.mask({16}), c.edge_values(16), flip(c.edge_values(16), {0})}),
          c.call("mixed dtypes", {c.mask({3, 4}), c.tensor({3, 4}),
                                  c.tensor({4}, -3, 3, is_float(c) ? DType::Int64 : DType::Float32)})};
    }})

LOOM_OP_SAMPLES("lerp", {
    .make = [](const SampleContext& c) {
      return Samples{
          c.call("same shape", {c.tensor({4, 5}), c.tensor({4, 5}), c.tensor({4, 5}, 0, 1)}).for_gradcheck(),
          c.call("broadcast", {c.tensor({3, 1, 5}), c.tensor({4, 1}), c.tensor({5}, 0, 1)}).for_gradcheck(),
          c.call("0-d weight", {c.tensor({2, 3}), c.tensor({2, 3}), c.tensor({}, 0, 1)}).for_gradcheck(),
          c.call("weight outside [0, 1]", {c.tensor({2, 3}), c.tensor({2, 3}), c.tensor({2, 3}, -2, 3)}).for_gradcheck(),
          c.call("empty", {c.tensor({0, 3}), c.tensor({0, 3}), c.tensor({3})}),
          c.call("large", {c.tensor({kLarge + 1}), c.tensor({kLarge + 1}), c.tensor({kLarge + 1}, 0, 1)}),
          c.call("edge values", {c.edge_values(16), flip(c.edge_values(16), {0}), c.tensor({16}, 0, 1)})};
    }})

}  // namespace
}  // namespace loom::opinfo
