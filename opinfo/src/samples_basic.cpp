// samples_basic.cpp — the first samples (add, sum, matmul, cat), the pattern
// every family file follows (see loom/opinfo.h).
#include <loom/opinfo.h>

namespace loom::opinfo {
namespace {
using V = std::vector<Sample>;
}  // namespace

LOOM_OP_SAMPLES("add", {
    .dtypes = kAllDTypes,
    .make = [](const SampleContext& c) {
      V v{c.call("same shape", {c.tensor({4, 5}), c.tensor({4, 5})}),
          c.call("broadcast", {c.tensor({3, 1, 5}), c.tensor({4, 1})}),
          c.call("0-d", {c.tensor({}), c.tensor({2, 3})}),
          c.call("empty", {c.tensor({0, 3}), c.tensor({3})}),
          c.call("large", {c.tensor({70000}), c.tensor({70000})})};
      if (c.dtype() != DType::Bool) v.push_back(c.call("alpha=2", {c.tensor({6}), c.tensor({6})}, {Value(int64_t{2})}));
      if (is_floating_point(c.dtype())) v.push_back(c.call("edge values", {c.edge_values(16), flip(c.edge_values(16), {0})}));
      return v;
    }})

LOOM_OP_SAMPLES("sum", {
    .dtypes = kAllDTypes,
    .make = [](const SampleContext& c) {
      return V{c.call("all", {c.tensor({5, 7})}),
               c.call("dim=1", {c.tensor({5, 7})}, {Value(std::vector<int64_t>{1})}),
               c.call("dims=(0,2) keepdim", {c.tensor({3, 4, 5})}, {Value(std::vector<int64_t>{0, 2}), Value(true)}),
               c.call("0-d", {c.tensor({})}),
               c.call("empty", {c.tensor({0, 4})}, {Value(std::vector<int64_t>{0})})};
    }})

LOOM_OP_SAMPLES("matmul", {
    .dtypes = kFloatDTypes,
    .accumulates = true,
    .make = [](const SampleContext& c) {
      Sample big = c.call("256x256", {c.tensor({256, 256}, -1, 1), c.tensor({256, 256}, -1, 1)});
      big.atol = 1e-4, big.rtol = 1e-4;
      return V{c.call("2-d", {c.tensor({3, 4}), c.tensor({4, 5})}),
               c.call("batched broadcast", {c.tensor({2, 3, 4}), c.tensor({4, 2})}),
               c.call("vector", {c.tensor({4}), c.tensor({4, 3})}),
               c.call("empty k", {c.tensor({3, 0}), c.tensor({0, 2})}), big};
    }})

LOOM_OP_SAMPLES("cat", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return V{c.call("dim 0", {c.tensor({2, 3}), c.tensor({4, 3})}, {Value(TensorCount{2}), Value(int64_t{0})}),
               c.call("dim 1, three", {c.tensor({2, 1}), c.tensor({2, 3}), c.tensor({2, 0})},
                      {Value(TensorCount{3}), Value(int64_t{1})})};
    }})

}  // namespace loom::opinfo
