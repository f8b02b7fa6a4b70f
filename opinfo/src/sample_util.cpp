// sample_util.cpp — the shape sets shared by the elementwise families.
#include "sample_util.h"

namespace loom::opinfo::detail {

Samples unary_samples(const SampleContext& c, double lo, double hi, const std::vector<Value>& values) {
  return {c.call("2-d", {c.tensor({4, 5}, lo, hi)}, values).for_gradcheck(),
          c.call("0-d", {c.tensor({}, lo, hi)}, values).for_gradcheck(),
          c.call("size-1 dims", {c.tensor({1, 3, 1}, lo, hi)}, values).for_gradcheck(),
          c.call("empty", {c.tensor({0, 3}, lo, hi)}, values),
          c.call("large", {c.tensor({kLarge + 1}, lo, hi)}, values),
          c.call("edge values", {c.edge_values(24)}, values)};
}

Samples binary_samples(const SampleContext& c, double lo, double hi, double olo, double ohi,
                       const std::vector<Value>& values) {
  return {c.call("same shape", {c.tensor({4, 5}, lo, hi), c.tensor({4, 5}, olo, ohi)}, values).for_gradcheck(),
          c.call("broadcast size-1 dims", {c.tensor({3, 1, 5}, lo, hi), c.tensor({4, 1}, olo, ohi)}, values).for_gradcheck(),
          c.call("0-d and 2-d", {c.tensor({}, lo, hi), c.tensor({2, 3}, olo, ohi)}, values).for_gradcheck(),
          c.call("2-d and 0-d", {c.tensor({2, 3}, lo, hi), c.tensor({}, olo, ohi)}, values).for_gradcheck(),
          c.call("0-d", {c.tensor({}, lo, hi), c.tensor({}, olo, ohi)}, values).for_gradcheck(),
          c.call("empty", {c.tensor({0, 3}, lo, hi), c.tensor({3}, olo, ohi)}, values),
          c.call("large", {c.tensor({kLarge + 1}, lo, hi), c.tensor({kLarge + 1}, olo, ohi)}, values),
          c.call("edge values", {c.edge_values(16).reshape({16, 1}), c.edge_values(16).reshape({1, 16})}, values)};
}

}  // namespace loom::opinfo::detail
