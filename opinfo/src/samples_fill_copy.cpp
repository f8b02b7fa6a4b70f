// samples_fill_copy.cpp — fill_ and copy_, the in-place ops with no
// functional partner: every dtype, casts between dtypes, broadcasting.
#include "sample_util.h"

#include <cmath>

namespace loom::opinfo {
namespace {
using namespace detail;

LOOM_OP_SAMPLES("fill_", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .reference_in_double = false,  // the value is rounded to the dtype
    .make = [](const SampleContext& c) {
      Samples v{c.call("int value", {c.tensor({4, 5})}, {I(1)}),
                c.call("bool value", {c.tensor({4, 5})}, {B(true)}),
                c.call("0-d", {c.tensor({})}, {I(0)}),
                c.call("empty", {c.tensor({0, 3})}, {I(1)}),
                c.call("large", {c.tensor({kLarge + 1})}, {I(1)})};
      if (is_float(c)) {
        v.push_back(c.call("float value", {c.tensor({4, 5})}, {F(0.1)}));
        v.push_back(c.call("NaN", {c.tensor({4, 5})}, {F(std::nan(""))}));
        v.push_back(c.call("-inf", {c.tensor({4, 5})}, {F(-INFINITY)}));
        v.push_back(c.call("beyond float16 (inf there)", {c.tensor({3})}, {F(1e6)}));
      } else if (c.dtype() != DType::Bool) {
        v.push_back(c.call("negative", {c.tensor({4, 5})}, {I(-3)}));
      }
      return v;
    }})

// copy_(self, src): src cast to self's dtype and broadcast to its shape.
LOOM_OP_SAMPLES("copy_", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .reference_in_double = false,  // a cast is the dtype's own rounding
    .make = [](const SampleContext& c) {
      Samples v{c.call("same dtype", {c.tensor({4, 5}), c.tensor({4, 5})}),
                c.call("broadcast src", {c.tensor({3, 4, 5}), c.tensor({4, 1})}),
                c.call("0-d src", {c.tensor({2, 3}), c.tensor({})}),
                c.call("0-d", {c.tensor({}), c.tensor({})}),
                c.call("empty", {c.tensor({0, 3}), c.tensor({3})}),
                c.call("large", {c.tensor({kLarge + 1}), c.tensor({kLarge + 1})}),
                c.call("edge values", {c.tensor({24}), c.edge_values(24)})};
      // Casts into the sample's dtype from every other dtype (in range of
      // the target, where a float -> integer cast is defined).
      for (DType from : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64, DType::UInt8, DType::Int8,
                         DType::Int16, DType::Int32, DType::Int64, DType::Bool})
        if (from != c.dtype())
          v.push_back(c.call(std::string("cast from ") + std::string(name(from)),
                             {c.tensor({3, 4}), c.tensor({3, 4}, 0, 100, from)}));
      if (is_float(c))  // float -> float casts keep the edge values
        v.push_back(c.call("edge values from float64", {c.tensor({24}), c.edge_values(24, DType::Float64)}));
      return v;
    }})

}  // namespace
}  // namespace loom::opinfo
