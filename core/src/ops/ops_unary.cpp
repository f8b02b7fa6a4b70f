// ops_unary.cpp — the elementwise unary ops of loom/plugin/op_tables.h plus the
// parametric ones (round, gelu, softplus, elu, leaky_relu, nan_to_num,
// clamp, hardtanh), each with its in-place form. Kernel arguments:
// docs/kernel_conventions.md, "Elementwise unary ops".
#include "activation_backward.h"
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/plugin/op_rules.hpp>
#include <loom/plugin/op_tables.h>
#include <loom/ops.h>

#include <cfloat>
#include <cstring>
#include <limits>
#include <numbers>

namespace loom {
namespace {

// The rule column of loom/plugin/op_tables.h.
using plugin::UnaryRule;

// The dtype the kernel computes in, or an error naming the op and dtype.
DType unary_compute(const OpCall& call, UnaryRule rule) {
  const DType t = call.arg(0).dtype();
  switch (rule) {
    case UnaryRule::Float: return is_floating_point(t) ? t : kDefaultFloat;
    case UnaryRule::FloatOnly:
      LOOM_CHECK(is_floating_point(t), call.op->name(),
                 ": expected a floating point tensor for 'self', got ", name(t));
      return t;
    case UnaryRule::SameNoBool:
      LOOM_CHECK(t != DType::Bool, call.op->name(), ": not supported for bool tensors ('self')");
      return t;
    case UnaryRule::Square: return t == DType::Bool ? DType::Int64 : t;
    case UnaryRule::Same:
    case UnaryRule::ToBool: return t;
  }
  return t;
}

template <UnaryRule R>
void prepare_unary(OpCall& call) {
  const DType t = unary_compute(call, R);
  prepare_elementwise(call, t, R == UnaryRule::ToBool ? DType::Bool : t);
}

// name_: computes in self's dtype, which must be what name would produce.
template <UnaryRule R>
void prepare_unary_inplace(OpCall& call) {
  const DType self = call.arg(0).dtype();
  const DType t = unary_compute(call, R);
  LOOM_CHECK(t == self, call.op->name(), ": result type ", name(t),
             " can't be cast to the dtype of 'self', ", name(self));
  prepare_self_output(call);
}

#define LOOM_DEFINE_UNARY(op, rule)                                                         \
  LOOM_CORE_OP(op##_def, #op "(Tensor self) -> Tensor", prepare_unary<UnaryRule::rule>, nullptr) \
  LOOM_CORE_OP(op##_inplace_def, #op "_(Tensor(a!) self) -> Tensor(a!)",                   \
               prepare_unary_inplace<UnaryRule::rule>, inplace_via_out_of_place)
LOOM_UNARY_OPS(LOOM_DEFINE_UNARY)
#undef LOOM_DEFINE_UNARY

#define LOOM_DEFINE_PREDICATE(op) \
  LOOM_CORE_OP(op##_def, #op "(Tensor self) -> Tensor", prepare_unary<UnaryRule::ToBool>, nullptr)
LOOM_PREDICATE_OPS(LOOM_DEFINE_PREDICATE)
#undef LOOM_DEFINE_PREDICATE

// In-place forms of the unary ops defined in ops_elementwise.cpp.
LOOM_CORE_OP(exp_inplace_def, "exp_(Tensor(a!) self) -> Tensor(a!)",
             prepare_unary_inplace<UnaryRule::Float>, inplace_via_out_of_place)
LOOM_CORE_OP(neg_inplace_def, "neg_(Tensor(a!) self) -> Tensor(a!)",
             prepare_unary_inplace<UnaryRule::SameNoBool>, inplace_via_out_of_place)
LOOM_CORE_OP(relu_inplace_def, "relu_(Tensor(a!) self) -> Tensor(a!)",
             prepare_unary_inplace<UnaryRule::SameNoBool>, inplace_via_out_of_place)

// ---- parametric ops ----------------------------------------------------------

void check_approximate(const OpCall& call) {
  const LoomValue& v = call.values[0];
  const std::string_view s(v.u.str.data, static_cast<size_t>(v.u.str.size));
  LOOM_CHECK(v.kind == LOOM_VALUE_STRING && (s == "none" || s == "tanh"), call.op->name(),
             ": approximate must be 'none' or 'tanh', got '", s, "'");
}
void prepare_gelu(OpCall& call) {
  check_approximate(call);
  prepare_unary<UnaryRule::FloatOnly>(call);
}
void prepare_gelu_inplace(OpCall& call) {
  check_approximate(call);
  prepare_unary_inplace<UnaryRule::FloatOnly>(call);
}

double dtype_max(DType t) {
  switch (t) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return FLT_MAX;
    default: return DBL_MAX;
  }
}
// None becomes 0, the dtype's max, the dtype's lowest: the kernel always
// gets three FLOATs.
void resolve_nan_to_num(OpCall& call) {
  const double mx = dtype_max(call.arg(0).dtype());
  const double defaults[3] = {0.0, mx, -mx};
  for (int i = 0; i < 3; ++i)
    if (call.values[i].kind == LOOM_VALUE_NONE) call.values[i] = detail::float_value(defaults[i]);
}
void prepare_nan_to_num(OpCall& call) {
  resolve_nan_to_num(call);
  prepare_unary<UnaryRule::Same>(call);
}
void prepare_nan_to_num_inplace(OpCall& call) {
  resolve_nan_to_num(call);
  prepare_unary_inplace<UnaryRule::Same>(call);
}

// clamp's dtype: the tensor's, unless a floating bound meets an integer
// tensor (as PyTorch's wrapped-number promotion gives).
DType clamp_compute(const OpCall& call) {
  const LoomValue& lo = call.values[0];
  const LoomValue& hi = call.values[1];
  LOOM_CHECK(lo.kind != LOOM_VALUE_NONE || hi.kind != LOOM_VALUE_NONE, call.op->name(),
             ": at least one of 'min' or 'max' must not be None");
  const DType t = call.arg(0).dtype();
  LOOM_CHECK(t != DType::Bool, call.op->name(), ": not supported for bool tensors ('self')");
  const bool float_bound = lo.kind == LOOM_VALUE_FLOAT || hi.kind == LOOM_VALUE_FLOAT;
  return float_bound && !is_floating_point(t) ? kDefaultFloat : t;
}
void prepare_clamp(OpCall& call) {
  const DType t = clamp_compute(call);
  prepare_elementwise(call, t, t);
}
void prepare_clamp_inplace(OpCall& call) {
  const DType t = clamp_compute(call);
  LOOM_CHECK(t == call.arg(0).dtype(), call.op->name(), ": result type ", name(t),
             " can't be cast to the dtype of 'self', ", name(call.arg(0).dtype()));
  prepare_self_output(call);
}

#define LOOM_DEFINE_PARAM_UNARY(op, args, prepare, prepare_inplace)                         \
  LOOM_CORE_OP(op##_def, #op "(Tensor self" args ") -> Tensor", prepare, nullptr)          \
  LOOM_CORE_OP(op##_inplace_def, #op "_(Tensor(a!) self" args ") -> Tensor(a!)", prepare_inplace, \
               inplace_via_out_of_place)
LOOM_DEFINE_PARAM_UNARY(round, ", *, int decimals=0", prepare_unary<UnaryRule::SameNoBool>,
                        prepare_unary_inplace<UnaryRule::SameNoBool>)
LOOM_DEFINE_PARAM_UNARY(gelu, ", *, str approximate='none'", prepare_gelu, prepare_gelu_inplace)
LOOM_DEFINE_PARAM_UNARY(softplus, ", Scalar beta=1, Scalar threshold=20",
                        prepare_unary<UnaryRule::FloatOnly>,
                        prepare_unary_inplace<UnaryRule::FloatOnly>)
LOOM_DEFINE_PARAM_UNARY(elu, ", Scalar alpha=1, Scalar scale=1, Scalar input_scale=1",
                        prepare_unary<UnaryRule::FloatOnly>,
                        prepare_unary_inplace<UnaryRule::FloatOnly>)
LOOM_DEFINE_PARAM_UNARY(leaky_relu, ", Scalar negative_slope=0.01",
                        prepare_unary<UnaryRule::FloatOnly>,
                        prepare_unary_inplace<UnaryRule::FloatOnly>)
LOOM_DEFINE_PARAM_UNARY(nan_to_num, ", float? nan=None, float? posinf=None, float? neginf=None",
                        prepare_nan_to_num, prepare_nan_to_num_inplace)
LOOM_DEFINE_PARAM_UNARY(clamp, ", Scalar? min=None, Scalar? max=None", prepare_clamp,
                        prepare_clamp_inplace)
#undef LOOM_DEFINE_PARAM_UNARY

// hardtanh is clamp's value in the input's dtype (bool rejected), an op of
// its own for its gradient: 0 at the bounds, where clamp's passes. Its
// composite is clamp, so no plugin needs a kernel; the gradient op
// _hardtanh_backward is one pass where a plugin has it.
void hardtanh_composite(OpCall& call) {
  const Tensor& x = call.arg(0);
  const Scalar lo = detail::scalar_from_value(call.values[0]), hi = detail::scalar_from_value(call.values[1]);
  call.result() = clamp(x, lo, hi).to(x.dtype());
}
LOOM_CORE_OP(hardtanh_def, "hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
             prepare_unary<UnaryRule::SameNoBool>, hardtanh_composite)
LOOM_CORE_OP(hardtanh_inplace_def, "hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
             prepare_unary_inplace<UnaryRule::SameNoBool>, inplace_via_out_of_place)

// The rules these prepare functions implement are the table's
// (loom/plugin/op_tables.h, LOOM_UNARY_SPECIAL_OPS), which plugins register by.
static_assert(plugin::op_mask("round") == plugin::kernel_mask(UnaryRule::SameNoBool));
static_assert(plugin::op_mask("gelu") == plugin::kernel_mask(UnaryRule::FloatOnly));
static_assert(plugin::op_mask("softplus") == plugin::kernel_mask(UnaryRule::FloatOnly));
static_assert(plugin::op_mask("elu") == plugin::kernel_mask(UnaryRule::FloatOnly));
static_assert(plugin::op_mask("leaky_relu") == plugin::kernel_mask(UnaryRule::FloatOnly));
static_assert(plugin::op_mask("nan_to_num") == plugin::kernel_mask(UnaryRule::Same));
static_assert(plugin::op_mask("clamp") == plugin::kernel_mask(UnaryRule::SameNoBool));

// ---- derivatives ------------------------------------------------------------------
using autograd::BackwardContext;
using autograd::inputs;
using autograd::none;
using autograd::outputs;

LOOM_DERIVATIVE(abs_def, "AbsBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, c.grad() * sign(c.input(0)));
})
// Piecewise constant: zero almost everywhere. A zero gradient rather than
// none, so grad() of them works as in PyTorch.
void zero_backward(BackwardContext& c) { c.set(0, zeros_like(c.grad())); }
LOOM_DERIVATIVE(sign_def, "SignBackward0", none(), none(), zero_backward)
LOOM_DERIVATIVE(floor_def, "FloorBackward0", none(), none(), zero_backward)
LOOM_DERIVATIVE(ceil_def, "CeilBackward0", none(), none(), zero_backward)
LOOM_DERIVATIVE(trunc_def, "TruncBackward0", none(), none(), zero_backward)
LOOM_DERIVATIVE(round_def, "RoundBackward0", none(), none(), zero_backward)
// PyTorch computes square as pow(self, 2), hence the node's name.
LOOM_DERIVATIVE_IN_FLOAT(square_def, "PowBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, c.grad() * c.input(0) * 2.0);
})
LOOM_DERIVATIVE_IN_FLOAT(exp2_def, "Exp2Backward0", none(), outputs(0), [](BackwardContext& c) {
  c.set(0, c.grad() * c.output(0) * std::numbers::ln2);
})
LOOM_DERIVATIVE_IN_FLOAT(expm1_def, "Expm1Backward0", none(), outputs(0), [](BackwardContext& c) {
  c.set(0, c.grad() * (c.output(0) + 1.0));
})
LOOM_DERIVATIVE_IN_FLOAT(log_def, "LogBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, c.grad() / c.input(0));
})
LOOM_DERIVATIVE_IN_FLOAT(log2_def, "Log2Backward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, c.grad() / (c.input(0) * std::numbers::ln2));
})
LOOM_DERIVATIVE_IN_FLOAT(log1p_def, "Log1PBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, c.grad() / (c.input(0) + 1.0));
})
LOOM_DERIVATIVE_IN_FLOAT(sqrt_def, "SqrtBackward0", none(), outputs(0), [](BackwardContext& c) {
  c.set(0, c.grad() / (c.output(0) * 2.0));
})
LOOM_DERIVATIVE_IN_FLOAT(rsqrt_def, "RsqrtBackward0", none(), outputs(0), [](BackwardContext& c) {
  const Tensor r = c.output(0);
  c.set(0, c.grad() * (r * r * r * -0.5));
})
LOOM_DERIVATIVE_IN_FLOAT(reciprocal_def, "ReciprocalBackward0", none(), outputs(0), [](BackwardContext& c) {
  const Tensor r = c.output(0);
  c.set(0, c.grad() * -(r * r));
})
LOOM_DERIVATIVE_IN_FLOAT(sin_def, "SinBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, c.grad() * cos(c.input(0)));
})
LOOM_DERIVATIVE_IN_FLOAT(cos_def, "CosBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, c.grad() * -sin(c.input(0)));
})
LOOM_DERIVATIVE_IN_FLOAT(tan_def, "TanBackward0", none(), outputs(0), [](BackwardContext& c) {
  const Tensor r = c.output(0);
  c.set(0, c.grad() * (r * r + 1.0));
})
// The activations' gradients are ops of their own
// (ops_activation_backward.cpp): one fused kernel where the device has one,
// the formula in elementwise ops where it does not.
LOOM_DERIVATIVE_IN_FLOAT(tanh_def, "TanhBackward0", none(), outputs(0), [](BackwardContext& c) {
  c.set(0, detail::tanh_backward(c.grad(), c.output(0)));
})
LOOM_DERIVATIVE_IN_FLOAT(sigmoid_def, "SigmoidBackward0", none(), outputs(0), [](BackwardContext& c) {
  c.set(0, detail::sigmoid_backward(c.grad(), c.output(0)));
})
LOOM_DERIVATIVE_IN_FLOAT(erf_def, "ErfBackward0", inputs(0), none(), [](BackwardContext& c) {
  const Tensor x = c.input(0);
  c.set(0, c.grad() * (exp(-(x * x)) * std::numbers::inv_sqrtpi * 2.0));
})
LOOM_DERIVATIVE_IN_FLOAT(silu_def, "SiluBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, detail::silu_backward(c.grad(), c.input(0)));
})
LOOM_DERIVATIVE_IN_FLOAT(gelu_def, "GeluBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, detail::gelu_backward(c.grad(), c.input(0), std::string(c.str(0))));
})
LOOM_DERIVATIVE_IN_FLOAT(softplus_def, "SoftplusBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, detail::softplus_backward(c.grad(), c.input(0), c.scalar(0), c.scalar(1)));
})
LOOM_DERIVATIVE_IN_FLOAT(elu_def, "EluBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, detail::elu_backward(c.grad(), c.input(0), c.scalar(0), c.scalar(1), c.scalar(2)));
})
LOOM_DERIVATIVE(leaky_relu_def, "LeakyReluBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, detail::leaky_relu_backward(c.grad(), c.input(0), c.scalar(0)));
})
LOOM_DERIVATIVE(hardtanh_def, "HardtanhBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, detail::hardtanh_backward(c.grad(), c.input(0), c.scalar(0), c.scalar(1)));
})
// Replaced values (NaN and infinities) are constants.
LOOM_DERIVATIVE(nan_to_num_def, "NanToNumBackward0", inputs(0), none(), [](BackwardContext& c) {
  c.set(0, where(isfinite(c.input(0)), c.grad(), 0.0));
})
// Clamped elements are constants; the bounds themselves still pass it.
LOOM_DERIVATIVE(clamp_def, "ClampBackward1", inputs(0), none(), [](BackwardContext& c) {
  const Tensor x = c.input(0);
  Tensor inside;  // within [min, max]
  if (!c.is_none(0)) inside = x >= c.scalar(0);
  if (!c.is_none(1)) {
    const Tensor below_max = x <= c.scalar(1);
    inside = inside.defined() ? logical_and(inside, below_max) : below_max;
  }
  c.set(0, where(inside, c.grad(), 0.0));
})

LOOM_NOT_DIFFERENTIABLE(logical_not_def)
LOOM_NOT_DIFFERENTIABLE(isnan_def)
LOOM_NOT_DIFFERENTIABLE(isinf_def)
LOOM_NOT_DIFFERENTIABLE(isfinite_def)

using detail::string_value;
LoomValue optional_float(std::optional<double> v) {
  return v ? detail::float_value(*v) : detail::none_value();
}
LoomValue optional_scalar(const std::optional<Scalar>& s) {
  return s ? s->abi() : detail::none_value();
}

}  // namespace

// ---- C++ API --------------------------------------------------------------------

#define LOOM_UNARY_FN(op, rule)                                                  \
  Tensor op(const Tensor& a) { return detail::run_op(op##_def(), {&a}); }        \
  Tensor& op##_out(Tensor& out, const Tensor& a) {                               \
    return detail::run_op_out(out, op##_def(), {&a});                            \
  }                                                                              \
  Tensor Tensor::op() const { return loom::op(*this); }                          \
  Tensor& Tensor::op##_() {                                                      \
    detail::run_op(op##_inplace_def(), {this});                                  \
    return *this;                                                                \
  }
LOOM_UNARY_OPS(LOOM_UNARY_FN)
#undef LOOM_UNARY_FN

#define LOOM_PREDICATE_FN(op)                                             \
  Tensor op(const Tensor& a) { return detail::run_op(op##_def(), {&a}); } \
  Tensor& op##_out(Tensor& out, const Tensor& a) {                        \
    return detail::run_op_out(out, op##_def(), {&a});                     \
  }                                                                       \
  Tensor Tensor::op() const { return loom::op(*this); }
LOOM_PREDICATE_OPS(LOOM_PREDICATE_FN)
#undef LOOM_PREDICATE_FN

Tensor& Tensor::exp_() {
  detail::run_op(exp_inplace_def(), {this});
  return *this;
}
Tensor& Tensor::neg_() {
  detail::run_op(neg_inplace_def(), {this});
  return *this;
}
Tensor& Tensor::relu_() {
  detail::run_op(relu_inplace_def(), {this});
  return *this;
}

Tensor round(const Tensor& a, int64_t decimals) {
  LoomValue d{};
  d.kind = LOOM_VALUE_INT;
  d.u.i = decimals;
  return detail::run_op(round_def(), {&a}, {d});
}
Tensor gelu(const Tensor& a, const std::string& approximate) {
  return detail::run_op(gelu_def(), {&a}, {string_value(approximate)});
}
Tensor softplus(const Tensor& a, Scalar beta, Scalar threshold) {
  return detail::run_op(softplus_def(), {&a}, {beta.abi(), threshold.abi()});
}
Tensor elu(const Tensor& a, Scalar alpha, Scalar scale, Scalar input_scale) {
  return detail::run_op(elu_def(), {&a}, {alpha.abi(), scale.abi(), input_scale.abi()});
}
Tensor leaky_relu(const Tensor& a, Scalar negative_slope) {
  return detail::run_op(leaky_relu_def(), {&a}, {negative_slope.abi()});
}
Tensor hardtanh(const Tensor& a, Scalar min_val, Scalar max_val) {
  return detail::run_op(hardtanh_def(), {&a}, {min_val.abi(), max_val.abi()});
}
Tensor& hardtanh_(Tensor& a, Scalar min_val, Scalar max_val) {
  detail::run_op(hardtanh_inplace_def(), {&a}, {min_val.abi(), max_val.abi()});
  return a;
}
Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  return detail::run_op(nan_to_num_def(), {&a},
                        {optional_float(nan), optional_float(posinf), optional_float(neginf)});
}
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  return detail::run_op(clamp_def(), {&a}, {optional_scalar(min), optional_scalar(max)});
}
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  detail::run_op(clamp_inplace_def(), {this}, {optional_scalar(min), optional_scalar(max)});
  return *this;
}
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return loom::clamp(*this, min, max);
}
Tensor Tensor::round(int64_t decimals) const { return loom::round(*this, decimals); }

}  // namespace loom
