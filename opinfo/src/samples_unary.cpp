// samples_unary.cpp — the elementwise unary ops of loom/plugin/op_tables.h, exp,
// neg, relu and the parametric ones (round, gelu, softplus, elu,
// leaky_relu, nan_to_num, clamp, hardtanh). In-place forms are derived by the runner.
#include "sample_util.h"

#include <loom/plugin/op_tables.h>

namespace loom::opinfo {
namespace {
using namespace detail;

const uint64_t kNumeric = kFloatDTypes | kIntegerDTypes;  // all but bool

// Samples over [lo, hi), the op's usual range, for ops defined everywhere.
#define LOOM_UNARY_SAMPLES(op, dtype_mask, lo, hi) \
  LOOM_OP_SAMPLES(#op, {.dtypes = dtype_mask, .make = [](const SampleContext& c) { return unary_samples(c, lo, hi); }})

// Ops whose rule allows every dtype (integers and bool compute in float32
// or keep their dtype).
LOOM_UNARY_SAMPLES(sign, kAllDTypes, -3, 3)
LOOM_UNARY_SAMPLES(square, kAllDTypes, -3, 3)
LOOM_UNARY_SAMPLES(exp, kAllDTypes, -3, 3)
LOOM_UNARY_SAMPLES(exp2, kAllDTypes, -3, 3)
LOOM_UNARY_SAMPLES(expm1, kAllDTypes, -3, 3)
LOOM_UNARY_SAMPLES(sin, kAllDTypes, -4, 4)
LOOM_UNARY_SAMPLES(cos, kAllDTypes, -4, 4)
LOOM_UNARY_SAMPLES(tan, kAllDTypes, -1.4, 1.4)
LOOM_UNARY_SAMPLES(tanh, kAllDTypes, -3, 3)
LOOM_UNARY_SAMPLES(sigmoid, kAllDTypes, -6, 6)
LOOM_UNARY_SAMPLES(erf, kAllDTypes, -3, 3)
LOOM_UNARY_SAMPLES(reciprocal, kAllDTypes, 0.25, 4)
// Domain-restricted: inputs inside the domain; the edge-values sample
// covers what lies outside (negative numbers, zero, NaN).
LOOM_UNARY_SAMPLES(log, kAllDTypes, 0.05, 8)
LOOM_UNARY_SAMPLES(log2, kAllDTypes, 0.05, 8)
LOOM_UNARY_SAMPLES(log1p, kAllDTypes, -0.9, 8)
LOOM_UNARY_SAMPLES(sqrt, kAllDTypes, 0, 9)
LOOM_UNARY_SAMPLES(rsqrt, kAllDTypes, 0.05, 9)
// Bool is rejected by these.
LOOM_UNARY_SAMPLES(abs, kNumeric, -3, 3)
LOOM_UNARY_SAMPLES(neg, kNumeric, -3, 3)
LOOM_UNARY_SAMPLES(relu, kNumeric, -3, 3)
LOOM_UNARY_SAMPLES(floor, kNumeric, -3, 3)
LOOM_UNARY_SAMPLES(ceil, kNumeric, -3, 3)
LOOM_UNARY_SAMPLES(trunc, kNumeric, -3, 3)
// Floating dtypes only.
LOOM_UNARY_SAMPLES(silu, kFloatDTypes, -4, 4)
#undef LOOM_UNARY_SAMPLES

// Rounding to decimals scales by 10^d in the dtype itself.
LOOM_OP_SAMPLES("round", {
    .dtypes = kNumeric,
    .reference_in_double = false,
    .make = [](const SampleContext& c) {
      Samples v = unary_samples(c, -30, 30);
      if (is_float(c)) {
        const std::vector<double> ties{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5};
        v.push_back(c.call("half-way ties", {from_vector(ties, {6}).to(c.dtype())}));
        v.push_back(c.call("decimals=2", {c.tensor({4, 5}, -3, 3)}, {I(2)}).for_gradcheck());
        v.push_back(c.call("decimals=-1", {c.tensor({4, 5}, -300, 300)}, {I(-1)}).for_gradcheck());
      }
      return v;
    }})

LOOM_OP_SAMPLES("gelu", {
    .make = [](const SampleContext& c) {
      Samples v = unary_samples(c, -4, 4);
      for (Sample s : unary_samples(c, -4, 4, {S("tanh")})) {
        s.label += ", approximate=tanh";
        v.push_back(std::move(s));
      }
      return v;
    }})

// gelu's input gradient (grad_output, self), both forms: the shapes of a
// binary op.
LOOM_OP_SAMPLES("_gelu_backward", {
    .make = [](const SampleContext& c) {
      Samples v = binary_samples(c, -3, 3, -4, 4);
      for (Sample s : binary_samples(c, -3, 3, -4, 4, {S("tanh")})) {
        s.label += ", approximate=tanh";
        v.push_back(std::move(s));
      }
      return v;
    }})

// The other activations' gradients (grad_output, self or the result, then
// the op's parameters): the shapes of a binary op, each with its default
// and another parameter set.
Samples activation_backward_samples(const SampleContext& c, double lo, double hi, const std::vector<Value>& a,
                                    const std::vector<Value>& b) {
  Samples v = binary_samples(c, -3, 3, lo, hi, a);
  if (b.empty()) return v;  // sigmoid's and tanh's: the second input is a result
  for (Sample s : binary_samples(c, -3, 3, lo, hi, b)) {
    s.label += ", other parameters";
    v.push_back(std::move(s));
  }
  return v;
}
LOOM_OP_SAMPLES("_threshold_backward", {.make = [](const SampleContext& c) {
  return activation_backward_samples(c, -2, 2, {I(0)}, {F(0.5)});
}})
// sigmoid's and tanh's take the result, which lies in [0, 1] or [-1, 1]:
// edge values only for grad_output (outside the range, r·r may overflow
// in float32 where the float64 reference does not).
Samples result_backward_samples(const SampleContext& c, double lo, double hi) {
  Samples v;
  for (Sample s : binary_samples(c, -3, 3, lo, hi))
    if (s.label != "edge values") v.push_back(std::move(s));
  v.push_back(c.call("edge values of grad_output", {c.edge_values(16).reshape({16, 1}), c.tensor({1, 16}, lo, hi)}));
  return v;
}
LOOM_OP_SAMPLES("_sigmoid_backward", {.make = [](const SampleContext& c) { return result_backward_samples(c, 0, 1); }})
LOOM_OP_SAMPLES("_tanh_backward", {.make = [](const SampleContext& c) { return result_backward_samples(c, -1, 1); }})
LOOM_OP_SAMPLES("_silu_backward", {.make = [](const SampleContext& c) {
  return activation_backward_samples(c, -6, 6, {}, {});
}})
LOOM_OP_SAMPLES("_softplus_backward", {.make = [](const SampleContext& c) {
  return activation_backward_samples(c, -25, 25, {I(1), I(20)}, {F(2), F(1)});
}})
LOOM_OP_SAMPLES("_elu_backward", {.make = [](const SampleContext& c) {
  return activation_backward_samples(c, -4, 4, {I(1), I(1), I(1)}, {F(0.5), I(2), F(1.5)});
}})
LOOM_OP_SAMPLES("_leaky_relu_backward", {.make = [](const SampleContext& c) {
  return activation_backward_samples(c, -2, 2, {F(0.01)}, {F(0.2)});
}})
LOOM_OP_SAMPLES("_hardtanh_backward", {.make = [](const SampleContext& c) {
  Samples v = activation_backward_samples(c, -2, 2, {I(-1), I(1)}, {F(-0.5), F(1.5)});
  // The bounds themselves, where the gradient is 0 (clamp's passes there).
  const std::vector<double> at{-1, -1, 1, 1, 0};
  v.push_back(c.call("self at the bounds", {c.tensor({5}), from_vector(at, {5}).to(c.dtype())}, {I(-1), I(1)}));
  return v;
}})

LOOM_OP_SAMPLES("softplus", {
    .make = [](const SampleContext& c) {
      Samples v = unary_samples(c, -25, 25);
      v.push_back(c.call("beta=2 threshold=5", {c.tensor({4, 5}, -6, 6)}, {I(2), I(5)}).for_gradcheck());
      v.push_back(c.call("beta=0.5 threshold=1.5", {c.tensor({4, 5}, -6, 6)}, {F(0.5), F(1.5)}).for_gradcheck());
      return v;
    }})

LOOM_OP_SAMPLES("elu", {
    .make = [](const SampleContext& c) {
      Samples v = unary_samples(c, -4, 4);
      v.push_back(c.call("alpha=0.5 scale=2 input_scale=1.5", {c.tensor({4, 5})}, {F(0.5), I(2), F(1.5)}).for_gradcheck());
      return v;
    }})

LOOM_OP_SAMPLES("leaky_relu", {
    .make = [](const SampleContext& c) {
      Samples v = unary_samples(c, -4, 4);
      v.push_back(c.call("negative_slope=0.2", {c.tensor({4, 5})}, {F(0.2)}).for_gradcheck());
      v.push_back(c.call("negative_slope=-1", {c.tensor({4, 5})}, {I(-1)}).for_gradcheck());
      return v;
    }})

// hardtanh keeps the input's dtype, integers too (a float bound is cast).
LOOM_OP_SAMPLES("hardtanh", {
    .dtypes = kNumeric,
    .make = [](const SampleContext& c) {
      Samples v = unary_samples(c, -3, 3);
      v.push_back(c.call("relu6 bounds", {c.tensor({4, 5}, -8, 8)}, {I(0), I(6)}).for_gradcheck());
      v.push_back(c.call("float bounds", {c.tensor({4, 5}, -3, 3)}, {F(-0.5), F(1.5)}).for_gradcheck());
      return v;
    }})

// The default replacement for +-inf is the dtype's own max: a float64
// reference would produce float64's max, which is inf again once cast back.
LOOM_OP_SAMPLES("nan_to_num", {
    .dtypes = kAllDTypes,
    .reference_in_double = false,
    .make = [](const SampleContext& c) {
      Samples v = unary_samples(c, -3, 3);
      v.push_back(c.call("nan=1 posinf=2 neginf=-2", {c.edge_values(16)}, {F(1), F(2), F(-2)}));
      v.push_back(c.call("posinf only", {c.edge_values(16)}, {None(), F(7)}));
      return v;
    }})

LOOM_OP_SAMPLES("clamp", {
    .dtypes = kNumeric,
    .make = [](const SampleContext& c) {
      Samples v = unary_samples(c, -5, 5, {I(-2), I(3)});
      v.push_back(c.call("min only", {c.tensor({4, 5}, -5, 5)}, {I(1)}).for_gradcheck());
      v.push_back(c.call("max only", {c.tensor({4, 5}, -5, 5)}, {None(), I(-1)}).for_gradcheck());
      v.push_back(c.call("float bounds", {c.tensor({4, 5}, -5, 5)}, {F(-1.5), F(2.5)}).for_gradcheck());
      v.push_back(c.call("min > max", {c.tensor({4, 5}, -5, 5)}, {I(2), I(1)}).for_gradcheck());
      return v;
    }})

}  // namespace
}  // namespace loom::opinfo
