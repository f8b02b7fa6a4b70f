// samples_indexing.cpp — gather, index_select, scatter (src, value),
// scatter_add, index_add, masked_fill, nonzero, masked_select, embedding.
// In-place forms (scatter_, scatter_add_, index_add_, masked_fill_) are
// derived by the runner from these.
#include "sample_util.h"

#include <cmath>
#include <limits>

namespace loom::opinfo {
namespace {
using namespace detail;

// A sample that sums hundreds of values into each element. float32 gets a
// wider tolerance for the order of the sum. float16 / bfloat16 accumulate in
// their own precision (as PyTorch's CPU kernels do), so ~400 rounded
// additions drift by whole units from the float64 reference: no useful
// tolerance tells that from a wrong kernel, and the small samples test
// them; the large one is dropped for them (nullopt).
std::optional<Sample> long_accumulation(const SampleContext& c, Sample s) {
  if (c.dtype() == DType::Float16 || c.dtype() == DType::BFloat16) return std::nullopt;
  if (is_float(c)) s.atol = s.rtol = 1e-4;
  return s;
}
// `v` plus `extra` when there is one.
Samples with(Samples v, std::optional<Sample> extra) {
  if (extra) v.push_back(std::move(*extra));
  return v;
}

LOOM_OP_SAMPLES("gather", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("dim 1", {c.tensor({4, 5}), c.indices({4, 3}, 5)}, {I(1)}),
                     c.call("dim 0, smaller index", {c.tensor({4, 5}), c.indices({6, 2}, 4)}, {I(0)}),
                     c.call("dim -1 of 3-d", {c.tensor({2, 3, 4}), c.indices({2, 2, 7}, 4)}, {I(-1)}),
                     c.call("0-d", {c.tensor({}), c.indices({}, 1)}, {I(0)}),
                     c.call("empty index", {c.tensor({4, 5}), c.indices({0, 5}, 4)}, {I(0)}),
                     c.call("sparse_grad", {c.tensor({3, 4}), c.indices({3, 2}, 4)}, {I(1), B(true)}),
                     c.call("large", {c.tensor({100, 50}), c.indices({100, 500}, 50)}, {I(1)})};
    }})

LOOM_OP_SAMPLES("index_select", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("dim 0, repeats", {c.tensor({4, 5}), c.indices({7}, 4)}, {I(0)}),
                     c.call("dim -1", {c.tensor({2, 3, 4}), c.indices({3}, 4)}, {I(-1)}),
                     c.call("int32 index", {c.tensor({4, 5}), c.indices({3}, 5).to(DType::Int32)}, {I(1)}),
                     c.call("0-d index", {c.tensor({4, 5}), c.indices({}, 4)}, {I(0)}),
                     c.call("0-d self", {c.tensor({}), c.indices({1}, 1)}, {I(0)}),
                     c.call("empty index", {c.tensor({4, 5}), c.indices({0}, 4)}, {I(0)}),
                     c.call("large", {c.tensor({300, 200}), c.indices({250}, 300)}, {I(0)})};
    }})

// scatter writes one src element per index: indices are distinct along `dim`
// so that no two writes land on one element (which wins is undefined).
LOOM_OP_SAMPLES("scatter.src", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("dim 0", {c.tensor({4, 5}), c.distinct_indices({3, 5}, 0, 4), c.tensor({3, 5})}, {I(0)}),
                     c.call("dim 1, src larger", {c.tensor({4, 5}), c.distinct_indices({4, 2}, 1, 5), c.tensor({5, 6})}, {I(1)}),
                     c.call("dim -1 of 3-d", {c.tensor({2, 3, 4}), c.distinct_indices({2, 3, 4}, -1, 4), c.tensor({2, 3, 4})}, {I(-1)}),
                     c.call("0-d", {c.tensor({}), c.distinct_indices({}, 0, 1), c.tensor({})}, {I(0)}),
                     c.call("empty index", {c.tensor({4, 5}), c.indices({0, 5}, 4), c.tensor({2, 5})}, {I(0)}),
                     c.call("large", {c.tensor({100, 400}), c.distinct_indices({100, 300}, 1, 400), c.tensor({100, 300})}, {I(1)})};
    }})

LOOM_OP_SAMPLES("scatter.value", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      // Writes of one value may collide harmlessly.
      return Samples{c.call("dim 0, int value", {c.tensor({4, 5}), c.indices({3, 5}, 4)}, {I(0), I(1)}),
                     c.call("dim -1", {c.tensor({2, 3, 4}), c.indices({2, 3, 2}, 4)}, {I(-1), I(0)}),
                     c.call("float value", {c.tensor({4, 5}), c.indices({2, 5}, 4)}, {I(0), F(is_float(c) ? -2.5 : 1.0)}),
                     c.call("bool value", {c.tensor({4, 5}), c.indices({4, 2}, 5)}, {I(1), B(true)}),
                     c.call("empty index", {c.tensor({4, 5}), c.indices({0, 5}, 4)}, {I(0), I(1)})};
    }})

// scatter_add and index_add: duplicate indices accumulate (in an order a
// device may choose: Close for floats).
LOOM_OP_SAMPLES("scatter_add", {
    .dtypes = kFloatDTypes | kIntegerDTypes,
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return with(Samples{c.call("dim 0, duplicates", {c.tensor({4, 5}), c.indices({6, 5}, 4), c.tensor({6, 5})}, {I(0)}),
                     c.call("dim 1, src larger", {c.tensor({4, 5}), c.indices({4, 3}, 5), c.tensor({5, 6})}, {I(1)}),
                     c.call("dim -1 of 3-d", {c.tensor({2, 3, 4}), c.indices({2, 3, 8}, 4), c.tensor({2, 3, 8})}, {I(-1)}),
                     c.call("0-d", {c.tensor({}), c.indices({}, 1), c.tensor({})}, {I(0)}),
                     c.call("empty index", {c.tensor({4, 5}), c.indices({0, 5}, 4), c.tensor({2, 5})}, {I(0)})},
                  long_accumulation(c, c.call("large, many collisions", {c.tensor({10, 50}), c.indices({4000, 50}, 10), c.tensor({4000, 50})}, {I(0)})));
    }})

LOOM_OP_SAMPLES("index_add", {
    .dtypes = kFloatDTypes | kIntegerDTypes,
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return with(Samples{c.call("dim 0, duplicates", {c.tensor({4, 5}), c.indices({6}, 4), c.tensor({6, 5})}, {I(0)}),
                     c.call("dim -1, alpha=2", {c.tensor({2, 3, 4}), c.indices({5}, 4), c.tensor({2, 3, 5})}, {I(-1), I(2)}),
                     c.call("int32 index", {c.tensor({4, 5}), c.indices({3}, 5).to(DType::Int32), c.tensor({4, 3})}, {I(1)}),
                     c.call("0-d", {c.tensor({}), c.indices({}, 1), c.tensor({})}, {I(0)}),
                     c.call("empty index", {c.tensor({4, 5}), c.indices({0}, 4), c.tensor({0, 5})}, {I(0)})},
                  long_accumulation(c, c.call("large", {c.tensor({64, 300}), c.indices({500}, 64), c.tensor({500, 300})}, {I(0)})));
    }})

LOOM_OP_SAMPLES("masked_fill.Scalar", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      Samples v{c.call("same shape", {c.tensor({4, 5}), c.mask({4, 5})}, {I(1)}),
                c.call("broadcast mask", {c.tensor({3, 4, 5}), c.mask({4, 1})}, {I(0)}),
                c.call("mask broadcasts self", {c.tensor({1, 5}), c.mask({3, 5})}, {I(1)}),
                c.call("0-d", {c.tensor({}), c.mask({})}, {I(1)}),
                c.call("empty", {c.tensor({0, 5}), c.mask({5})}, {I(1)}),
                c.call("bool value", {c.tensor({4, 5}), c.mask({4, 5})}, {B(true)}),
                c.call("large", {c.tensor({kLarge + 1}), c.mask({kLarge + 1})}, {I(0)})};
      if (is_float(c)) {
        v.push_back(c.call("NaN value", {c.tensor({4, 5}), c.mask({4, 5})}, {F(std::nan(""))}));
        v.push_back(c.call("-inf value", {c.tensor({4, 5}), c.mask({4, 5})}, {F(-std::numeric_limits<double>::infinity())}));
      }
      return v;
    }})

LOOM_OP_SAMPLES("nonzero", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("2-d", {c.tensor({4, 5}, -1, 2)}),
                     c.call("3-d", {c.tensor({2, 3, 4}, -1, 2)}),
                     c.call("0-d", {c.tensor({}, 1, 2)}),
                     c.call("all zero", {zeros({3, 4}, c.dtype())}),
                     c.call("empty", {c.tensor({0, 4})}),
                     c.call("large", {c.tensor({kLarge + 1}, -1, 2)}),
                     c.call("edge values", {c.edge_values(24)})};
    }})

LOOM_OP_SAMPLES("masked_select", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("same shape", {c.tensor({4, 5}), c.mask({4, 5})}),
                     c.call("broadcast", {c.tensor({3, 1, 5}), c.mask({4, 1})}),
                     c.call("0-d", {c.tensor({}), c.mask({}, 1.0)}),
                     c.call("none selected", {c.tensor({3, 4}), c.mask({3, 4}, 0.0)}),
                     c.call("empty", {c.tensor({0, 5}), c.mask({5})}),
                     c.call("large", {c.tensor({kLarge + 1}), c.mask({kLarge + 1})})};
    }})

LOOM_OP_SAMPLES("embedding", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("1-d indices", {c.tensor({10, 4}), c.indices({6}, 10)}),
                     c.call("2-d indices", {c.tensor({10, 4}), c.indices({3, 5}, 10)}),
                     c.call("0-d index", {c.tensor({10, 4}), c.indices({}, 10)}),
                     c.call("padding_idx", {c.tensor({10, 4}), c.indices({8}, 10)}, {I(2)}),
                     c.call("negative padding_idx", {c.tensor({10, 4}), c.indices({8}, 10)}, {I(-1)}),
                     c.call("empty indices", {c.tensor({10, 4}), c.indices({0}, 10)}),
                     c.call("large", {c.tensor({1000, 64}), c.indices({700}, 1000)})};
    }})

}  // namespace
}  // namespace loom::opinfo
