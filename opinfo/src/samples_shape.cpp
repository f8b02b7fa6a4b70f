// samples_shape.cpp — ops that move elements without arithmetic: flip,
// roll, tril, triu, pad; and sort and topk. (cat is in samples_basic.cpp.)
// All exact.
#include "sample_util.h"

namespace loom::opinfo {
namespace {
using namespace detail;

LOOM_OP_SAMPLES("flip", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("dim 0", {c.tensor({4, 5})}, {L({0})}),
                     c.call("dims (0, -1) of 3-d", {c.tensor({2, 3, 4})}, {L({0, -1})}),
                     c.call("no dims", {c.tensor({2, 3})}, {L({})}),
                     c.call("size-1 dim", {c.tensor({1, 5})}, {L({0, 1})}),
                     c.call("0-d", {c.tensor({})}, {L({})}),
                     c.call("empty", {c.tensor({0, 3})}, {L({1})}),
                     c.call("large", {c.tensor({3, 20000})}, {L({1})})};
    }})

LOOM_OP_SAMPLES("roll", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("flattened (no dims)", {c.tensor({4, 5})}, {L({3})}),
                     c.call("dim 1", {c.tensor({4, 5})}, {L({2}), L({1})}),
                     c.call("negative shift, dim -1", {c.tensor({2, 3, 4})}, {L({-5}), L({-1})}),
                     c.call("two dims", {c.tensor({3, 4})}, {L({1, -2}), L({0, 1})}),
                     c.call("shift beyond size", {c.tensor({5})}, {L({12}), L({0})}),
                     c.call("0-d", {c.tensor({})}, {L({1})}),
                     c.call("empty", {c.tensor({0, 3})}, {L({1}), L({1})}),
                     c.call("large", {c.tensor({kLarge + 1})}, {L({777}), L({0})})};
    }})

Samples triangle_samples(const SampleContext& c) {
  return {c.call("square", {c.tensor({5, 5})}),
          c.call("wide, diagonal=1", {c.tensor({3, 6})}, {I(1)}),
          c.call("tall, diagonal=-2", {c.tensor({6, 3})}, {I(-2)}),
          c.call("batched", {c.tensor({2, 3, 4})}, {I(0)}),
          c.call("diagonal beyond size", {c.tensor({3, 4})}, {I(9)}),
          c.call("empty", {c.tensor({0, 4})}),
          c.call("large", {c.tensor({200, 201})}, {I(-3)})};
}
LOOM_OP_SAMPLES("tril", {.dtypes = kAllDTypes, .compare = Compare::Exact,
                         .make = [](const SampleContext& c) { return triangle_samples(c); }})
LOOM_OP_SAMPLES("triu", {.dtypes = kAllDTypes, .compare = Compare::Exact,
                         .make = [](const SampleContext& c) { return triangle_samples(c); }})

LOOM_OP_SAMPLES("pad", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      Samples v{c.call("constant, last dim", {c.tensor({3, 4})}, {L({1, 2})}),
                c.call("constant, two dims, value", {c.tensor({2, 3, 4})}, {L({1, 0, 2, 1}), S("constant"), F(1)}),
                c.call("constant, negative (crop)", {c.tensor({3, 6})}, {L({-1, -2, 1, 0})}),
                c.call("constant, 1-d to size 0", {c.tensor({3})}, {L({-1, -2})}),
                c.call("constant, empty", {c.tensor({0, 3})}, {L({1, 1})}),
                c.call("reflect 1-d", {c.tensor({2, 3, 5})}, {L({2, 4}), S("reflect")}),
                c.call("reflect 2-d", {c.tensor({1, 2, 4, 5})}, {L({1, 3, 3, 2}), S("reflect")}),
                c.call("replicate 2-d", {c.tensor({2, 3, 4})}, {L({2, 2, 0, 3}), S("replicate")}),
                c.call("replicate 3-d", {c.tensor({1, 2, 2, 3, 4})}, {L({1, 1, 2, 0, 1, 1}), S("replicate")}),
                c.call("large", {c.tensor({4, 100, 100})}, {L({3, 3, 3, 3})})};
      if (c.dtype() != DType::Bool)
        v.push_back(c.call("constant, value=-2", {c.tensor({3, 4})}, {L({2, 2}), S("constant"), F(-2)}));
      return v;
    }})

// sort: ties leave the order of the indices open unless stable=True, so
// unstable samples draw distinct values.
LOOM_OP_SAMPLES("sort", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .reference_in_double = false,
    .make = [](const SampleContext& c) {
      Samples v{c.call("last dim", {c.distinct({4, 6})}),
                c.call("dim 0 descending", {c.distinct({5, 3})}, {I(0), B(true)}),
                c.call("dim -2 of 3-d", {c.distinct({2, 5, 3})}, {I(-2)}),
                c.call("stable with ties", {c.tensor({4, 9}, -2, 2)}, {I(-1), B(false), B(true)}),
                c.call("stable descending with ties", {c.tensor({4, 9}, -2, 2)}, {I(1), B(true), B(true)}),
                c.call("0-d", {c.tensor({})}, {I(0)}),
                c.call("size-1 dim", {c.distinct({4, 1})}, {I(1)}),
                c.call("empty", {c.tensor({0, 5})}),
                c.call("large, stable", {c.tensor({2, 20001})}, {I(-1), B(false), B(true)})};
      if (is_float(c))
        v.push_back(c.call("edge values, stable (NaN last)", {c.edge_values(32).reshape({2, 16})},
                           {I(-1), B(false), B(true)}));
      return v;
    }})

LOOM_OP_SAMPLES("topk", {
    .dtypes = kFloatDTypes | kIntegerDTypes,  // bool is rejected
    .compare = Compare::Exact,
    .reference_in_double = false,
    .make = [](const SampleContext& c) {
      return Samples{c.call("k=3 last dim", {c.distinct({4, 7})}, {I(3)}),
                     c.call("k=2 dim 0 smallest", {c.distinct({5, 3})}, {I(2), I(0), B(false)}),
                     c.call("k=all", {c.distinct({3, 5})}, {I(5)}),
                     c.call("k=0", {c.distinct({3, 5})}, {I(0)}),
                     c.call("k=1 dim -2 of 3-d", {c.distinct({2, 5, 3})}, {I(1), I(-2)}),
                     c.call("0-d", {c.distinct({})}, {I(1), I(0)}),
                     c.call("large", {c.distinct({200})}, {I(17)}),
                     c.call("empty", {c.tensor({0, 5})}, {I(2)})};
    }})

}  // namespace
}  // namespace loom::opinfo
