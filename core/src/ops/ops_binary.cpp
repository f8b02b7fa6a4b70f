// ops_binary.cpp — the elementwise binary ops of loom/plugin/op_tables.h, div's
// rounding modes, where, lerp and the in-place forms. Kernel arguments:
// docs/kernel_conventions.md, "Elementwise binary and ternary ops".
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/plugin/op_rules.hpp>
#include <loom/plugin/op_tables.h>
#include <loom/ops.h>

namespace loom {
namespace {

// The rule column of loom/plugin/op_tables.h.
using plugin::BinaryRule;

// The dtype `name` computes in, from the promoted dtype of its arguments.
DType binary_compute(const OpCall& call, BinaryRule rule, DType t) {
  switch (rule) {
    case BinaryRule::Arith:
      LOOM_CHECK(t != DType::Bool, call.op->name(), ": not supported for bool tensors");
      return t;
    case BinaryRule::FloatBin: return is_floating_point(t) ? t : kDefaultFloat;
    case BinaryRule::Bitwise:
      LOOM_CHECK(is_integral(t, true), call.op->name(),
                 ": expected integer or bool tensors, got ", name(t));
      return t;
    default: return t;
  }
}

template <BinaryRule R>
void prepare_binary(OpCall& call) {
  const DType t = binary_compute(call, R, result_type(call));
  const bool to_bool = R == BinaryRule::Compare || R == BinaryRule::Logical;
  prepare_elementwise(call, t, to_bool ? DType::Bool : t);
}

template <BinaryRule R>
void prepare_binary_inplace(OpCall& call) {
  if constexpr (R == BinaryRule::Logical) {
    // The result is bool, which every dtype holds: read `other` as truth
    // values so that 0.5 stays true when self is an integer tensor.
    if (call.arg(1).dtype() != call.arg(0).dtype()) {
      call.temps.push_back(call.arg(1).to(DType::Bool));
      call.args[1] = &call.temps.back();
    }
  } else {
    binary_compute(call, R, result_type(call));
    if (R == BinaryRule::FloatBin)
      LOOM_CHECK(is_floating_point(call.arg(0).dtype()), call.op->name(),
                 ": result type float32 can't be cast to the dtype of 'self', ",
                 name(call.arg(0).dtype()));
  }
  prepare_inplace(call);
}

#define LOOM_DEFINE_BINARY(op, rule, inplace, F)                                              \
  LOOM_CORE_OP(op##_def, #op "(Tensor self, Tensor other) -> Tensor",                       \
               prepare_binary<BinaryRule::rule>, nullptr)                                   \
  LOOM_DEFINE_BINARY_INPLACE_##inplace(op, rule)
#define LOOM_DEFINE_BINARY_INPLACE_0(op, rule)
#define LOOM_DEFINE_BINARY_INPLACE_1(op, rule)                                              \
  LOOM_CORE_OP(op##_inplace_def, #op "_(Tensor(a!) self, Tensor other) -> Tensor(a!)",      \
               prepare_binary_inplace<BinaryRule::rule>, inplace_via_out_of_place)
LOOM_BINARY_OPS(LOOM_DEFINE_BINARY)

// ---- div with rounding modes, sub_ and div_ ------------------------------------

// values[0]: NONE, or STRING "trunc" / "floor".
std::string_view rounding_mode(const OpCall& call) {
  const LoomValue& v = call.values[0];
  if (v.kind == LOOM_VALUE_NONE) return {};
  const std::string_view s(v.u.str.data, static_cast<size_t>(v.u.str.size));
  LOOM_CHECK(v.kind == LOOM_VALUE_STRING && (s == "trunc" || s == "floor"), call.op->name(),
             ": expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", s, "'");
  return s;
}

DType div_compute(const OpCall& call) {
  DType t = result_type(call);
  if (rounding_mode(call).empty()) return is_floating_point(t) ? t : kDefaultFloat;
  LOOM_CHECK(t != DType::Bool, call.op->name(), ": rounding division is not supported for bool tensors");
  return t;
}

void prepare_div(OpCall& call) {
  const DType t = div_compute(call);
  prepare_elementwise(call, t, t);
}
void prepare_div_inplace(OpCall& call) {
  const DType t = div_compute(call);
  LOOM_CHECK(!(is_floating_point(t) && !is_floating_point(call.arg(0).dtype())), call.op->name(),
             ": result type ", name(t), " can't be cast to the dtype of 'self', ",
             name(call.arg(0).dtype()));
  prepare_inplace(call);
}
void prepare_sub_inplace(OpCall& call) {
  LOOM_CHECK(call.arg(0).dtype() != DType::Bool, call.op->name(),
             ": subtraction with bool tensors is not supported; use logical_xor_() instead");
  LOOM_CHECK(!(call.values[0].kind == LOOM_VALUE_FLOAT && !call.arg(0).is_floating_point()),
             call.op->name(), ": for integral input tensors, argument alpha must not be a floating point number");
  prepare_inplace(call);
}

LOOM_CORE_OP(div_def, "div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor",
             prepare_div, nullptr)
LOOM_CORE_OP(div_inplace_def,
             "div_(Tensor(a!) self, Tensor other, *, str? rounding_mode=None) -> Tensor(a!)",
             prepare_div_inplace, inplace_via_out_of_place)
LOOM_CORE_OP(sub_inplace_def, "sub_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
             prepare_sub_inplace, inplace_via_out_of_place)

// ---- where and lerp ------------------------------------------------------------

void prepare_where(OpCall& call) {
  LOOM_CHECK(call.arg(0).dtype() == DType::Bool, "where: expected 'condition' to be a bool tensor, got ",
             name(call.arg(0).dtype()));
  const DType t = result_type({call.args[1], call.args[2]}, "where");
  const DimVector shape = broadcast_all(call);
  call.inputs.resize(3);
  set_input(call, 0, DType::Bool, shape);
  set_input(call, 1, t, shape);
  set_input(call, 2, t, shape);
  call.compute_dtype = t;
  auto& plan = call.outputs.emplace_back();
  plan.dtype = t;
  plan.sizes = shape;
}

void check_lerp(const OpCall& call) {
  const DType t = result_type(call);
  LOOM_CHECK(is_floating_point(t), call.op->name(), ": expected floating point tensors, got ", name(t));
}
void prepare_lerp(OpCall& call) {
  check_lerp(call);
  const DType t = result_type(call);
  prepare_elementwise(call, t, t);
}
void prepare_lerp_inplace(OpCall& call) {
  check_lerp(call);
  prepare_inplace(call);
}

LOOM_CORE_OP(where_def, "where(Tensor condition, Tensor self, Tensor other) -> Tensor", prepare_where,
             nullptr)
LOOM_CORE_OP(lerp_def, "lerp(Tensor self, Tensor end, Tensor weight) -> Tensor", prepare_lerp, nullptr)
LOOM_CORE_OP(lerp_inplace_def, "lerp_(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)",
             prepare_lerp_inplace, inplace_via_out_of_place)
// prepare_lerp implements the table's rule (LOOM_BINARY_SPECIAL_OPS).
static_assert(plugin::op_mask("lerp") == plugin::kernel_mask(BinaryRule::FloatOnly));

// ---- derivatives ------------------------------------------------------------------
LOOM_DERIVATIVE_IN_FLOAT(div_def, "DivBackward0", autograd::inputs(0, 1), autograd::none(),
                [](autograd::BackwardContext& c) {
                  if (!c.is_none(0)) {  // piecewise constant: zero almost everywhere
                    for (size_t i = 0; i < 2; ++i)
                      if (c.needs_grad(i)) c.set(i, zeros_like(c.grad()));
                    return;
                  }
                  const Tensor b = c.input(1);
                  if (c.needs_grad(0)) c.set(0, c.grad() / b);
                  if (c.needs_grad(1)) c.set(1, neg(c.grad()) * c.input(0) / (b * b));
                })

LOOM_DERIVATIVE(where_def, "WhereBackward0", autograd::inputs(0), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const Tensor cond = c.input(0);
                  if (c.needs_grad(1)) c.set(1, where(cond, c.grad(), 0.0));
                  if (c.needs_grad(2)) c.set(2, where(cond, 0.0, c.grad()));
                })

using autograd::BackwardContext;

LOOM_DERIVATIVE_IN_FLOAT(remainder_def, "RemainderBackward0", autograd::inputs(0, 1), autograd::none(),
                [](BackwardContext& c) {
                  if (c.needs_grad(0)) c.set(0, c.grad());
                  if (c.needs_grad(1))
                    c.set(1, -(c.grad() * div(c.input(0), c.input(1), std::string("floor"))));
                })

// fmod(a, b) = a - trunc(a / b) * b.
LOOM_DERIVATIVE_IN_FLOAT(fmod_def, "FmodBackward1", autograd::inputs(0, 1), autograd::none(),
                [](BackwardContext& c) {
                  if (c.needs_grad(0)) c.set(0, c.grad());
                  if (c.needs_grad(1))
                    c.set(1, -(c.grad() * div(c.input(0), c.input(1), std::string("trunc"))));
                })

// The guards are PyTorch's: exponent 0 makes base^(e-1) infinite at base 0
// while the slope is 0; and 0^e for e >= 0 is taken as constant in e
// (log(0) is -inf).
LOOM_DERIVATIVE_IN_FLOAT(pow_def, "PowBackward1", autograd::inputs(0, 1), autograd::outputs(0),
                [](BackwardContext& c) {
                  const Tensor base = c.input(0), e = c.input(1);
                  if (c.needs_grad(0))
                    c.set(0, where(e == 0, 0.0, c.grad() * e * pow(base, e - 1)));
                  if (c.needs_grad(1))
                    c.set(1, where(logical_and(base == 0, e >= 0), 0.0,
                                   c.grad() * c.output(0) * log(base)));
                })
// pow(Tensor, Scalar) is PowBackward0, pow(Tensor, Tensor) PowBackward1,
// pow(Scalar, Tensor) PowBackward2, as PyTorch names them.
LOOM_DERIVATIVE_NAME(pow_def, [](const OpCall& call) {
  if (call.arg(1).impl()->is_wrapped_number()) return "PowBackward0";
  return call.arg(0).impl()->is_wrapped_number() ? "PowBackward2" : "PowBackward1";
})

// maximum / minimum: the gradient goes to the argument that won, split
// evenly on ties (PyTorch).
Tensor winner_grad(const Tensor& grad, const Tensor& won, const Tensor& tie) {
  return where(tie, grad * 0.5, where(won, grad, 0.0));
}
LOOM_DERIVATIVE(maximum_def, "MaximumBackward0", autograd::inputs(0, 1), autograd::none(),
                [](BackwardContext& c) {
                  const Tensor a = c.input(0), b = c.input(1), tie = a == b;
                  if (c.needs_grad(0)) c.set(0, winner_grad(c.grad(), a > b, tie));
                  if (c.needs_grad(1)) c.set(1, winner_grad(c.grad(), b > a, tie));
                })
LOOM_DERIVATIVE(minimum_def, "MinimumBackward0", autograd::inputs(0, 1), autograd::none(),
                [](BackwardContext& c) {
                  const Tensor a = c.input(0), b = c.input(1), tie = a == b;
                  if (c.needs_grad(0)) c.set(0, winner_grad(c.grad(), a < b, tie));
                  if (c.needs_grad(1)) c.set(1, winner_grad(c.grad(), b < a, tie));
                })

LOOM_DERIVATIVE_IN_FLOAT(atan2_def, "Atan2Backward0", autograd::inputs(0, 1), autograd::none(),
                [](BackwardContext& c) {
                  const Tensor a = c.input(0), b = c.input(1);
                  // PyTorch 2's: 0 at the origin, where the quotient is 0/0.
                  const Tensor r2 = a * a + b * b;
                  const Tensor g = where(r2 == Scalar(0.0), zeros_like(r2), c.grad() / r2);
                  if (c.needs_grad(0)) c.set(0, g * b);
                  if (c.needs_grad(1)) c.set(1, -(g * a));
                })

LOOM_DERIVATIVE_IN_FLOAT(lerp_def, "LerpBackward1", autograd::inputs(0, 1, 2), autograd::none(),
                [](BackwardContext& c) {
                  const Tensor w = c.input(2);
                  if (c.needs_grad(0)) c.set(0, c.grad() * (1.0 - w));
                  if (c.needs_grad(1)) c.set(1, c.grad() * w);
                  if (c.needs_grad(2)) c.set(2, c.grad() * (c.input(1) - c.input(0)));
                })
// A number as weight is LerpBackward0.
LOOM_DERIVATIVE_NAME(lerp_def, [](const OpCall& call) {
  return call.arg(2).impl()->is_wrapped_number() ? "LerpBackward0" : "LerpBackward1";
})

LOOM_NOT_DIFFERENTIABLE(bitwise_and_def)
LOOM_NOT_DIFFERENTIABLE(bitwise_or_def)
LOOM_NOT_DIFFERENTIABLE(bitwise_xor_def)
LOOM_NOT_DIFFERENTIABLE(logical_and_def)
LOOM_NOT_DIFFERENTIABLE(logical_or_def)
LOOM_NOT_DIFFERENTIABLE(logical_xor_def)
LOOM_NOT_DIFFERENTIABLE(eq_def)
LOOM_NOT_DIFFERENTIABLE(ne_def)
LOOM_NOT_DIFFERENTIABLE(lt_def)
LOOM_NOT_DIFFERENTIABLE(le_def)
LOOM_NOT_DIFFERENTIABLE(gt_def)
LOOM_NOT_DIFFERENTIABLE(ge_def)

LoomValue rounding_value(const std::optional<std::string>& mode) {
  return mode ? detail::string_value(*mode) : detail::none_value();
}

}  // namespace

// ---- C++ API ---------------------------------------------------------------------

#define LOOM_BINARY_FN(op, rule, inplace, F)                                                 \
  Tensor op(const Tensor& a, const Tensor& b) { return detail::run_op(op##_def(), {&a, &b}); } \
  Tensor& op##_out(Tensor& out, const Tensor& a, const Tensor& b) {                        \
    return detail::run_op_out(out, op##_def(), {&a, &b});                                  \
  }                                                                                        \
  Tensor op(const Tensor& a, Scalar b) {                                                   \
    const Tensor bt = scalar_tensor(b, a.device());                                        \
    return detail::run_op(op##_def(), {&a, &bt});                                          \
  }                                                                                        \
  Tensor Tensor::op(const Tensor& other) const { return loom::op(*this, other); }          \
  LOOM_BINARY_INPLACE_FN_##inplace(op)
#define LOOM_BINARY_INPLACE_FN_0(op)
#define LOOM_BINARY_INPLACE_FN_1(op)                \
  Tensor& Tensor::op##_(const Tensor& other) {      \
    detail::run_op(op##_inplace_def(), {this, &other}); \
    return *this;                                   \
  }
LOOM_BINARY_OPS(LOOM_BINARY_FN)
#undef LOOM_BINARY_FN

Tensor div(const Tensor& a, const Tensor& b, const std::optional<std::string>& rounding_mode) {
  return detail::run_op(div_def(), {&a, &b}, {rounding_value(rounding_mode)});
}
Tensor div(const Tensor& a, const Tensor& b) { return div(a, b, std::nullopt); }
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b,
                const std::optional<std::string>& rounding_mode) {
  return detail::run_op_out(out, div_def(), {&a, &b}, {rounding_value(rounding_mode)});
}
Tensor& where_out(Tensor& out, const Tensor& condition, const Tensor& a, const Tensor& b) {
  return detail::run_op_out(out, where_def(), {&condition, &a, &b});
}
Tensor floor_divide(const Tensor& a, const Tensor& b) { return div(a, b, std::string("floor")); }
Tensor Tensor::div(const Tensor& o) const { return loom::div(*this, o); }
Tensor& Tensor::div_(const Tensor& o, const std::optional<std::string>& rounding_mode) {
  detail::run_op(div_inplace_def(), {this, &o}, {rounding_value(rounding_mode)});
  return *this;
}
Tensor& Tensor::sub_(const Tensor& o, Scalar alpha) {
  detail::run_op(sub_inplace_def(), {this, &o}, {alpha.abi()});
  return *this;
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  return detail::run_op(where_def(), {&condition, &a, &b});
}
Tensor where(const Tensor& condition, const Tensor& a, Scalar b) {
  const Tensor bt = scalar_tensor(b, a.device());
  return where(condition, a, bt);
}
Tensor where(const Tensor& condition, Scalar a, const Tensor& b) {
  const Tensor at = scalar_tensor(a, b.device());
  return where(condition, at, b);
}
Tensor lerp(const Tensor& a, const Tensor& end, const Tensor& weight) {
  return detail::run_op(lerp_def(), {&a, &end, &weight});
}
Tensor lerp(const Tensor& a, const Tensor& end, Scalar weight) {
  const Tensor w = scalar_tensor(weight, a.device());
  return lerp(a, end, w);
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  detail::run_op(lerp_inplace_def(), {this, &end, &weight});
  return *this;
}

Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, Scalar b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, b); }
Tensor operator<(const Tensor& a, Scalar b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, Scalar b) { return le(a, b); }
Tensor operator>(const Tensor& a, Scalar b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, b); }
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator!(const Tensor& a) { return logical_not(a); }

}  // namespace loom
