// samples_linalg.cpp — mm, bmm, dot, outer, addmm, baddbmm, linear.
// (matmul is in samples_basic.cpp.) Products of k terms get a tolerance that
// grows with k; the runner scales it for half types.
#include "sample_util.h"

#include <cmath>

namespace loom::opinfo {
namespace {
using namespace detail;

const uint64_t kNumeric = kFloatDTypes | kIntegerDTypes;

// A sample whose reduction is long enough that summation order shows: a
// wider tolerance.
Sample long_sum(Sample s) {
  s.atol = 1e-4, s.rtol = 1e-4;
  return s;
}
// `v` without its long sums for integer dtypes: 8-bit sums would overflow,
// and the CPU reference, computed in double, would not wrap as a device does.
Samples floats_only_long(const SampleContext& c, Samples v) {
  if (!is_float(c)) std::erase_if(v, [](const Sample& s) { return s.atol != 0; });
  return v;
}

LOOM_OP_SAMPLES("mm", {
    .dtypes = kNumeric,
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return floats_only_long(c, Samples{c.call("3x4 @ 4x5", {c.tensor({3, 4}), c.tensor({4, 5})}),
                     c.call("1x1", {c.tensor({1, 1}), c.tensor({1, 1})}),
                     c.call("vector-like", {c.tensor({1, 6}), c.tensor({6, 1})}),
                     c.call("empty k", {c.tensor({3, 0}), c.tensor({0, 2})}),
                     c.call("empty m", {c.tensor({0, 4}), c.tensor({4, 2})}),
                     long_sum(c.call("200x300 @ 300x150", {c.tensor({200, 300}, -1, 1), c.tensor({300, 150}, -1, 1)}))});
    }})

LOOM_OP_SAMPLES("bmm", {
    .dtypes = kNumeric,
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return floats_only_long(c, Samples{c.call("batch 2", {c.tensor({2, 3, 4}), c.tensor({2, 4, 5})}),
                     c.call("batch 1", {c.tensor({1, 2, 2}), c.tensor({1, 2, 3})}),
                     c.call("empty batch", {c.tensor({0, 3, 4}), c.tensor({0, 4, 5})}),
                     c.call("empty k", {c.tensor({2, 3, 0}), c.tensor({2, 0, 5})}),
                     long_sum(c.call("large", {c.tensor({8, 64, 128}, -1, 1), c.tensor({8, 128, 64}, -1, 1)}))});
    }})

LOOM_OP_SAMPLES("dot", {
    .dtypes = kNumeric,
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return floats_only_long(c, Samples{c.call("n=7", {c.tensor({7}), c.tensor({7})}),
                     c.call("n=1", {c.tensor({1}), c.tensor({1})}),
                     c.call("empty", {c.tensor({0}), c.tensor({0})}),
                     long_sum(c.call("large", {c.tensor({kLarge + 1}, -1, 1), c.tensor({kLarge + 1}, -1, 1)})),
                     c.call("edge values", {c.edge_values(16), c.tensor({16})})});
    }})

LOOM_OP_SAMPLES("outer", {
    .dtypes = kAllDTypes,
    .make = [](const SampleContext& c) {
      return Samples{c.call("4 x 5", {c.tensor({4}), c.tensor({5})}),
                     c.call("1 x 3", {c.tensor({1}), c.tensor({3})}),
                     c.call("empty", {c.tensor({0}), c.tensor({3})}),
                     c.call("mixed dtypes", {c.tensor({4}), c.tensor({3}, -3, 3, is_float(c) ? DType::Int64 : DType::Float32)}),
                     c.call("large", {c.tensor({300}), c.tensor({200})}),
                     c.call("edge values", {c.edge_values(16), c.edge_values(16)})};
    }})

// addmm and baddbmm: `(self, a, b, *, beta, alpha)`; beta=0 ignores self,
// NaN included.
LOOM_OP_SAMPLES("addmm", {
    .dtypes = kNumeric,
    .accumulates = true,
    .make = [](const SampleContext& c) {
      Samples v{c.call("defaults", {c.tensor({3, 5}), c.tensor({3, 4}), c.tensor({4, 5})}),
                c.call("broadcast self (row)", {c.tensor({5}), c.tensor({3, 4}), c.tensor({4, 5})}),
                c.call("0-d self", {c.tensor({}), c.tensor({3, 4}), c.tensor({4, 5})}),
                c.call("beta=2 alpha=3", {c.tensor({3, 5}), c.tensor({3, 4}), c.tensor({4, 5})}, {I(2), I(3)}),
                c.call("empty k", {c.tensor({3, 2}), c.tensor({3, 0}), c.tensor({0, 2})}),
                long_sum(c.call("large", {c.tensor({100, 80}), c.tensor({100, 200}, -1, 1), c.tensor({200, 80}, -1, 1)}))};
      if (is_float(c)) {
        v.push_back(c.call("beta=0.5 alpha=-1.5", {c.tensor({3, 5}), c.tensor({3, 4}), c.tensor({4, 5})}, {F(0.5), F(-1.5)}));
        v.push_back(c.call("beta=0 ignores NaN self", {full({3, 5}, std::nan(""), c.dtype()), c.tensor({3, 4}), c.tensor({4, 5})}, {I(0)}));
      }
      return floats_only_long(c, std::move(v));
    }})

LOOM_OP_SAMPLES("baddbmm", {
    .dtypes = kNumeric,
    .accumulates = true,
    .make = [](const SampleContext& c) {
      Samples v{c.call("defaults", {c.tensor({2, 3, 5}), c.tensor({2, 3, 4}), c.tensor({2, 4, 5})}),
                c.call("broadcast self", {c.tensor({3, 1}), c.tensor({2, 3, 4}), c.tensor({2, 4, 5})}),
                c.call("beta=2 alpha=3", {c.tensor({2, 3, 5}), c.tensor({2, 3, 4}), c.tensor({2, 4, 5})}, {I(2), I(3)}),
                c.call("empty batch", {c.tensor({0, 3, 5}), c.tensor({0, 3, 4}), c.tensor({0, 4, 5})}),
                long_sum(c.call("large", {c.tensor({4, 60, 50}), c.tensor({4, 60, 128}, -1, 1), c.tensor({4, 128, 50}, -1, 1)}))};
      if (is_float(c))
        v.push_back(c.call("beta=0 ignores NaN self", {full({2, 3, 5}, std::nan(""), c.dtype()), c.tensor({2, 3, 4}), c.tensor({2, 4, 5})}, {I(0)}));
      return floats_only_long(c, std::move(v));
    }})

LOOM_OP_SAMPLES("linear", {
    .dtypes = kNumeric,
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return floats_only_long(c, Samples{c.call("no bias", {c.tensor({3, 4}), c.tensor({5, 4})}),
                     c.call("bias", {c.tensor({3, 4}), c.tensor({5, 4}), c.tensor({5})}),
                     c.call("explicit None bias", {c.tensor({3, 4}), c.tensor({5, 4}), std::nullopt}),
                     c.call("batched input", {c.tensor({2, 3, 4}), c.tensor({5, 4}), c.tensor({5})}),
                     c.call("1-d input", {c.tensor({4}), c.tensor({5, 4}), c.tensor({5})}),
                     c.call("empty batch", {c.tensor({0, 4}), c.tensor({5, 4}), c.tensor({5})}),
                     long_sum(c.call("large", {c.tensor({128, 256}, -1, 1), c.tensor({64, 256}, -1, 1), c.tensor({64})}))});
    }})

}  // namespace
}  // namespace loom::opinfo
