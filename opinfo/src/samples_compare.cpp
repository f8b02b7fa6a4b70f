// samples_compare.cpp — ops with a bool result: the comparisons, the
// logical ops and the predicates (isnan, isinf, isfinite). All exact; the
// edge values (NaN, ±Inf, ±0) are the point.
#include "sample_util.h"

namespace loom::opinfo {
namespace {
using namespace detail;

// Comparisons see ties: draw small integers so that equal pairs occur in
// every dtype.
Samples compare_samples(const SampleContext& c) {
  Samples v = binary_samples(c, -3, 3, -3, 3);
  v.push_back(c.call("mixed dtypes", {c.tensor({3, 4}, -3, 3), c.tensor({4}, -3, 3, is_float(c) ? DType::Int64 : DType::Float32)}));
  if (!is_float(c)) return v;  // integers in [-3, 3) tie often already
  for (Sample& s : v)
    if (s.label != "edge values") s.tensors[0] = s.tensors[0]->floor(), s.tensors[1] = s.tensors[1]->floor();
  v.push_back(c.call("-0 against +0", {c.edge_values(16), c.edge_values(16).neg()}));
  return v;
}

#define LOOM_COMPARE_SAMPLES(op)                                                                 \
  LOOM_OP_SAMPLES(#op, {.dtypes = kAllDTypes, .compare = Compare::Exact,                         \
                        .make = [](const SampleContext& c) { return compare_samples(c); }})
LOOM_COMPARE_SAMPLES(eq)
LOOM_COMPARE_SAMPLES(ne)
LOOM_COMPARE_SAMPLES(lt)
LOOM_COMPARE_SAMPLES(le)
LOOM_COMPARE_SAMPLES(gt)
LOOM_COMPARE_SAMPLES(ge)
LOOM_COMPARE_SAMPLES(logical_and)
LOOM_COMPARE_SAMPLES(logical_or)
LOOM_COMPARE_SAMPLES(logical_xor)
#undef LOOM_COMPARE_SAMPLES

#define LOOM_PREDICATE_SAMPLES(op)                                                               \
  LOOM_OP_SAMPLES(#op, {.dtypes = kAllDTypes, .compare = Compare::Exact,                         \
                        .make = [](const SampleContext& c) { return unary_samples(c, -2, 2); }})
LOOM_PREDICATE_SAMPLES(logical_not)
LOOM_PREDICATE_SAMPLES(isnan)
LOOM_PREDICATE_SAMPLES(isinf)
LOOM_PREDICATE_SAMPLES(isfinite)
#undef LOOM_PREDICATE_SAMPLES

}  // namespace
}  // namespace loom::opinfo
