// samples_reduce.cpp — reductions and scans: mean, prod, amax, amin,
// max.dim, min.dim, argmax, argmin, var, std, norm, logsumexp, all, any,
// cumsum, cumprod. (sum is in samples_basic.cpp.) Every op: all dims, one
// dim, negative dims, several dims, keepdim, 0-d, empty, a large input and
// the edge values.
#include "sample_util.h"

#include <limits>

namespace loom::opinfo {
namespace {
using namespace detail;

using Dims = std::vector<int64_t>;

// The samples of an op `op(self, int[]? dim, bool keepdim, ...)`, inputs from
// [lo, hi). `empty_full` says whether reducing an empty tensor to a scalar is
// defined (sum, all: yes; amax, argmax: an error).
Samples dim_list_samples(const SampleContext& c, double lo, double hi, bool empty_full) {
  Samples v{c.call("all dims (None)", {c.tensor({5, 7}, lo, hi)}),
            c.call("dim=1", {c.tensor({5, 7}, lo, hi)}, {L({1})}),
            c.call("dim=-1 keepdim", {c.tensor({3, 4, 5}, lo, hi)}, {L({-1}), B(true)}),
            c.call("dims=(0,2)", {c.tensor({3, 4, 5}, lo, hi)}, {L({0, 2})}),
            c.call("dims=(-3,1) keepdim", {c.tensor({3, 4, 5}, lo, hi)}, {L({-3, 1}), B(true)}),
            c.call("size-1 dim", {c.tensor({4, 1, 3}, lo, hi)}, {L({1})}),
            c.call("0-d", {c.tensor({}, lo, hi)}),
            c.call("0-d dim=0", {c.tensor({}, lo, hi)}, {L({0})}),
            c.call("empty kept dim", {c.tensor({0, 4}, lo, hi)}, {L({1})}),
            c.call("large", {c.tensor({kLarge + 3}, lo, hi)}),
            c.call("large, inner dim", {c.tensor({3, 20000}, lo, hi)}, {L({1})}),
            c.call("large, outer dim", {c.tensor({20000, 3}, lo, hi)}, {L({0})}),
            c.call("edge values", {c.edge_values(32).reshape({4, 8})}, {L({1})})};
  if (empty_full) v.push_back(c.call("empty reduced", {c.tensor({0, 4}, lo, hi)}, {L({0})}));
  return v;
}

// The samples of an op `op(self, int dim, bool keepdim)` (max.dim, argmax
// with a dim). Values are distinct, so the index of the extremum is unique.
Samples single_dim_samples(const SampleContext& c) {
  Tensor ties = c.tensor({6, 8}, 0, 2);  // integers and bool: 0 and 1 already
  if (is_float(c)) ties = ties.floor();
  Samples v{c.call("dim=1", {c.distinct({5, 7})}, {I(1)}),
            c.call("dim=0 keepdim", {c.distinct({5, 7})}, {I(0), B(true)}),
            c.call("dim=-2", {c.distinct({2, 3, 4})}, {I(-2)}),
            c.call("size-1 dim", {c.distinct({4, 1})}, {I(1)}),
            c.call("0-d", {c.distinct({})}, {I(0)}),
            c.call("empty kept dim", {c.tensor({0, 4})}, {I(1)}),
            c.call("large", {c.tensor({3, 20000})}, {I(1)}),
            c.call("ties: first index", {ties}, {I(1)})};
  if (is_float(c)) v.push_back(c.call("edge values (NaN wins)", {c.edge_values(32).reshape({4, 8})}, {I(1)}));
  return v;
}

LOOM_OP_SAMPLES("mean", {
    .make = [](const SampleContext& c) {
      Samples v = dim_list_samples(c, -3, 3, true);
      v.push_back(c.call("dtype=float64", {c.tensor({4, 5})}, {None(), B(false), D(DType::Float64)}));
      return v;
    }})

LOOM_OP_SAMPLES("prod", {
    .dtypes = kAllDTypes,
    .make = [](const SampleContext& c) {
      // Close to 1, so that products stay in range.
      Samples v = is_float(c) ? dim_list_samples(c, 0.6, 1.5, true) : dim_list_samples(c, -1, 2, true);
      v.push_back(c.call("dtype=float64", {c.tensor({4, 5}, -2, 2)}, {L({1}), B(false), D(DType::Float64)}));
      return v;
    }})

// Exact results; indices (max.dim, argmax) follow the dtype's own order.
#define LOOM_EXTREMUM_SAMPLES(op, make_samples)                                                      \
  LOOM_OP_SAMPLES(op, {.dtypes = kAllDTypes, .compare = Compare::Exact, .reference_in_double = false, \
                       .make = [](const SampleContext& c) { return make_samples; }})
LOOM_EXTREMUM_SAMPLES("amax", dim_list_samples(c, -3, 3, false))
LOOM_EXTREMUM_SAMPLES("amin", dim_list_samples(c, -3, 3, false))
LOOM_EXTREMUM_SAMPLES("max.dim", single_dim_samples(c))
LOOM_EXTREMUM_SAMPLES("min.dim", single_dim_samples(c))

Samples arg_samples(const SampleContext& c) {
  Samples v = single_dim_samples(c);
  v.push_back(c.call("all dims (None)", {c.distinct({4, 6})}));
  v.push_back(c.call("all dims keepdim", {c.distinct({4, 6})}, {None(), B(true)}));
  return v;
}

LOOM_EXTREMUM_SAMPLES("argmax", arg_samples(c))
LOOM_EXTREMUM_SAMPLES("argmin", arg_samples(c))
#undef LOOM_EXTREMUM_SAMPLES

// var and std: `(self, dim, *, correction, keepdim)`.
Samples spread_samples(const SampleContext& c) {
  return {c.call("all dims", {c.tensor({5, 7})}),
          c.call("dim=1", {c.tensor({5, 7})}, {L({1})}),
          c.call("dims=(0,-1) keepdim", {c.tensor({3, 4, 5})}, {L({0, -1}), None(), B(true)}),
          c.call("correction=0", {c.tensor({5, 7})}, {L({0}), I(0)}),
          c.call("correction=2.5", {c.tensor({5, 7})}, {L({1}), F(2.5)}),
          c.call("one element (NaN with correction 1)", {c.tensor({3, 1})}, {L({1})}),
          c.call("0-d", {c.tensor({})}, {None(), I(0)}),
          c.call("empty kept dim", {c.tensor({0, 4})}, {L({1})}),
          c.call("large", {c.tensor({kLarge + 3}, 10, 11)}),
          c.call("edge values", {c.edge_values(32).reshape({4, 8})}, {L({1})})};
}
LOOM_OP_SAMPLES("var", {.make = [](const SampleContext& c) { return spread_samples(c); }})
LOOM_OP_SAMPLES("std", {.make = [](const SampleContext& c) { return spread_samples(c); }})

LOOM_OP_SAMPLES("norm", {
    .make = [](const SampleContext& c) {
      Samples v;
      for (Sample s : dim_list_samples(c, -3, 3, true)) {
        s.values.insert(s.values.begin(), I(2));
        v.push_back(std::move(s));
      }
      const double inf = std::numeric_limits<double>::infinity();
      const std::pair<const char*, double> ps[] = {{"1", 1.0}, {"3", 3.0}, {"0.5", 0.5}, {"0", 0.0}, {"inf", inf}, {"-inf", -inf}};
      for (auto [label, p] : ps) v.push_back(c.call(std::string("p=") + label, {c.tensor({4, 6})}, {F(p), L({1})}));
      v.push_back(c.call("p=None", {c.tensor({4, 6})}, {None()}));
      return v;
    }})

LOOM_OP_SAMPLES("logsumexp", {
    .make = [](const SampleContext& c) {
      return Samples{c.call("dim=1", {c.tensor({5, 7})}, {L({1})}),
                     c.call("dims=(0,-1) keepdim", {c.tensor({3, 4, 5})}, {L({0, -1}), B(true)}),
                     c.call("large values", {c.tensor({4, 6}, 50, 80)}, {L({1})}),
                     c.call("0-d", {c.tensor({})}, {L({0})}),
                     c.call("empty reduced (-inf)", {c.tensor({0, 4})}, {L({0})}),
                     c.call("large", {c.tensor({3, 20000})}, {L({1})}),
                     c.call("edge values", {c.edge_values(32).reshape({4, 8})}, {L({1})})};
    }})

LOOM_OP_SAMPLES("all", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      Samples v = dim_list_samples(c, 0, 3, true);
      v.push_back(c.call("all true", {c.mask({3, 5}, 1.0)}, {L({1})}));
      return v;
    }})

LOOM_OP_SAMPLES("any", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      Samples v = dim_list_samples(c, -1, 1, true);
      v.push_back(c.call("all false", {c.mask({3, 5}, 0.0)}, {L({1})}));
      return v;
    }})

// cumsum and cumprod: `(self, int dim, *, dtype)`; the large sample draws
// from [large_lo, large_hi).
Samples scan_samples(const SampleContext& c, double lo, double hi, double large_lo, double large_hi) {
  // A long scan accumulates rounding that depends on the scan's order.
  Sample large = c.call("large", {c.tensor({kLarge + 3}, large_lo, large_hi)}, {I(0)});
  large.atol = large.rtol = 1e-3;
  return {c.call("dim=1", {c.tensor({5, 7}, lo, hi)}, {I(1)}),
          c.call("dim=0", {c.tensor({5, 7}, lo, hi)}, {I(0)}),
          c.call("dim=-2 of 3-d", {c.tensor({3, 4, 5}, lo, hi)}, {I(-2)}),
          c.call("0-d", {c.tensor({}, lo, hi)}, {I(0)}),
          c.call("empty", {c.tensor({0, 4}, lo, hi)}, {I(0)}),
          large,
          c.call("dtype=float64", {c.tensor({4, 5}, lo, hi)}, {I(1), D(DType::Float64)}),
          c.call("edge values", {c.edge_values(32).reshape({4, 8})}, {I(1)})};
}
LOOM_OP_SAMPLES("cumsum", {
    .dtypes = kAllDTypes,
    .make = [](const SampleContext& c) { return scan_samples(c, -3, 3, -3, 3); }})
LOOM_OP_SAMPLES("cumprod", {
    .dtypes = kAllDTypes,
    // In float32 and float64 the large product's factors have E[ln x] = 0 on
    // [0.7694, 1.25), so it stays finite: where a product crosses the overflow
    // threshold depends on the order of the multiplications (a parallel scan is
    // not the CPU's loop). float16 and bfloat16 overflow early whatever the
    // range (a random walk of 40,000 factors), the same way on every device.
    .make = [](const SampleContext& c) {
      if (!is_float(c)) return scan_samples(c, -1, 2, -1, 2);
      const bool wide = c.dtype() == DType::Float32 || c.dtype() == DType::Float64;
      return wide ? scan_samples(c, 0.7, 1.4, 0.7694, 1.25) : scan_samples(c, 0.7, 1.4, 0.7, 1.4);
    }})

}  // namespace
}  // namespace loom::opinfo
