// ops_elementwise.cpp — add, sub, mul, neg, relu, exp and the arithmetic
// operators (div and the rest of the elementwise family: ops_binary.cpp,
// ops_unary.cpp).
#include "activation_backward.h"
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>
#include <loom/plugin/op_rules.hpp>

namespace loom {
namespace {

void check_alpha(const OpCall& call, DType t) {
  const LoomValue& alpha = call.values[0];
  LOOM_CHECK(!(alpha.kind == LOOM_VALUE_FLOAT && !is_floating_point(t)), call.op->name(),
             ": for integral input tensors, argument alpha must not be a floating point number");
  LOOM_CHECK(!(alpha.kind != LOOM_VALUE_BOOL && t == DType::Bool && !(alpha.u.i == 1)),
             call.op->name(), ": for boolean tensors, alpha must be a boolean");
}

void prepare_add(OpCall& call) {
  const DType t = result_type(call);
  check_alpha(call, t);
  prepare_elementwise(call, t, t);
}

void prepare_sub(OpCall& call) {
  const DType t = result_type(call);
  LOOM_CHECK(t != DType::Bool, call.op->name(),
             ": subtraction with two bool tensors is not supported; use logical_xor() instead");
  check_alpha(call, t);
  prepare_elementwise(call, t, t);
}

void prepare_mul(OpCall& call) {
  const DType t = result_type(call);
  prepare_elementwise(call, t, t);
}

void prepare_neg(OpCall& call) {
  const DType t = call.arg(0).dtype();
  LOOM_CHECK(t != DType::Bool, call.op->name(),
             ": negation on a bool tensor is not supported; use logical_not() instead");
  prepare_elementwise(call, t, t);
}

void prepare_relu(OpCall& call) {
  const DType t = call.arg(0).dtype();
  LOOM_CHECK(t != DType::Bool, call.op->name(), ": not supported for bool tensors");
  prepare_elementwise(call, t, t);
}

void prepare_float_unary(OpCall& call) {  // integers compute in the default float
  DType t = call.arg(0).dtype();
  if (!is_floating_point(t)) t = kDefaultFloat;
  prepare_elementwise(call, t, t);
}

// self.op_(other) without an in-place kernel: out-of-place, then copy back.
void add_inplace_composite(OpCall& call) {
  Tensor self = call.arg(0);
  self.copy_(add(self, call.arg(1), detail::scalar_from_value(call.values[0])));
  call.outputs[0].result = self;
}
void mul_inplace_composite(OpCall& call) {
  Tensor self = call.arg(0);
  self.copy_(mul(self, call.arg(1)));
  call.outputs[0].result = self;
}

LOOM_CORE_OP(add_op, "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", prepare_add, nullptr)
LOOM_CORE_OP(sub_op, "sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", prepare_sub, nullptr)
LOOM_CORE_OP(mul_op, "mul(Tensor self, Tensor other) -> Tensor", prepare_mul, nullptr)
LOOM_CORE_OP(neg_op, "neg(Tensor self) -> Tensor", prepare_neg, nullptr)
LOOM_CORE_OP(relu_op, "relu(Tensor self) -> Tensor", prepare_relu, nullptr)
LOOM_CORE_OP(exp_op, "exp(Tensor self) -> Tensor", prepare_float_unary, nullptr)

// The rules the prepare functions above implement are the table's
// (loom/plugin/op_tables.h, LOOM_UNARY_SPECIAL_OPS and
// LOOM_BINARY_SPECIAL_OPS), which plugins register by.
static_assert(plugin::op_mask("add") == plugin::kernel_mask(plugin::BinaryRule::Extremum));
static_assert(plugin::op_mask("sub") == plugin::kernel_mask(plugin::BinaryRule::Arith));
static_assert(plugin::op_mask("mul") == plugin::kernel_mask(plugin::BinaryRule::Extremum));
static_assert(plugin::op_mask("neg") == plugin::kernel_mask(plugin::UnaryRule::SameNoBool));
static_assert(plugin::op_mask("relu") == plugin::kernel_mask(plugin::UnaryRule::SameNoBool));
static_assert(plugin::op_mask("exp") == plugin::kernel_mask(plugin::UnaryRule::Float));
// ---- derivatives ---------------------------------------------------------------
using autograd::BackwardContext;
using autograd::inputs;
using autograd::none;
using autograd::outputs;

LOOM_DERIVATIVE(add_op, "AddBackward0", none(), none(), [](BackwardContext& c) {
  if (c.needs_grad(0)) c.set(0, c.grad());
  if (c.needs_grad(1)) c.set(1, c.scalar(0).to_double() == 1.0 ? c.grad() : c.grad() * c.scalar(0));
})
LOOM_DERIVATIVE(sub_op, "SubBackward0", none(), none(), [](BackwardContext& c) {
  if (c.needs_grad(0)) c.set(0, c.grad());
  if (c.needs_grad(1)) c.set(1, c.grad() * (-c.scalar(0).to_double()));
})
// 1 - x (a number minus a tensor) is PyTorch's rsub.
LOOM_DERIVATIVE_NAME(sub_op, [](const OpCall& call) {
  return call.arg(0).impl()->is_wrapped_number() ? "RsubBackward1" : "SubBackward0";
})
LOOM_DERIVATIVE(mul_op, "MulBackward0", inputs(0, 1), none(), [](BackwardContext& c) {
  if (c.needs_grad(0)) c.set(0, c.grad() * c.input(1));
  if (c.needs_grad(1)) c.set(1, c.grad() * c.input(0));
})
LOOM_DERIVATIVE(neg_op, "NegBackward0", none(), none(), [](BackwardContext& c) { c.set(0, neg(c.grad())); })
// _threshold_backward (ops_activation_backward.cpp): one fused kernel where
// the device has one.
LOOM_DERIVATIVE(relu_op, "ReluBackward0", none(), outputs(0), [](BackwardContext& c) {
  c.set(0, detail::threshold_backward(c.grad(), c.output(0), 0));
})
LOOM_DERIVATIVE(exp_op, "ExpBackward0", none(), outputs(0), [](BackwardContext& c) {
  c.set(0, c.grad() * c.output(0));
})

LOOM_CORE_OP(add_inplace_op, "add_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
             prepare_inplace, add_inplace_composite)
LOOM_CORE_OP(mul_inplace_op, "mul_(Tensor(a!) self, Tensor other) -> Tensor(a!)", prepare_inplace,
             mul_inplace_composite)

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  return detail::run_op(add_op(), {&a, &b}, {alpha.abi()});
}
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  return detail::run_op(sub_op(), {&a, &b}, {alpha.abi()});
}
Tensor mul(const Tensor& a, const Tensor& b) { return detail::run_op(mul_op(), {&a, &b}); }
Tensor& neg_out(Tensor& out, const Tensor& a) { return detail::run_op_out(out, neg_op(), {&a}); }
Tensor& relu_out(Tensor& out, const Tensor& a) { return detail::run_op_out(out, relu_op(), {&a}); }
Tensor& exp_out(Tensor& out, const Tensor& a) { return detail::run_op_out(out, exp_op(), {&a}); }
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  return detail::run_op_out(out, add_op(), {&a, &b}, {alpha.abi()});
}
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  return detail::run_op_out(out, sub_op(), {&a, &b}, {alpha.abi()});
}
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return detail::run_op_out(out, mul_op(), {&a, &b});
}
Tensor neg(const Tensor& a) { return detail::run_op(neg_op(), {&a}); }
Tensor relu(const Tensor& a) { return detail::run_op(relu_op(), {&a}); }
Tensor exp(const Tensor& a) { return detail::run_op(exp_op(), {&a}); }

Tensor Tensor::add(const Tensor& o, Scalar alpha) const { return loom::add(*this, o, alpha); }
Tensor Tensor::sub(const Tensor& o, Scalar alpha) const { return loom::sub(*this, o, alpha); }
Tensor Tensor::mul(const Tensor& o) const { return loom::mul(*this, o); }
Tensor Tensor::neg() const { return loom::neg(*this); }
Tensor Tensor::relu() const { return loom::relu(*this); }
Tensor Tensor::exp() const { return loom::exp(*this); }

Tensor& Tensor::add_(const Tensor& o, Scalar alpha) {
  detail::run_op(add_inplace_op(), {this, &o}, {alpha.abi()});
  return *this;
}
Tensor& Tensor::mul_(const Tensor& o) {
  detail::run_op(mul_inplace_op(), {this, &o});
  return *this;
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, scalar_tensor(b, a.device())); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, scalar_tensor(b, a.device())); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, scalar_tensor(b, a.device())); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, scalar_tensor(b, a.device())); }
Tensor operator+(Scalar a, const Tensor& b) { return add(scalar_tensor(a, b.device()), b); }
Tensor operator-(Scalar a, const Tensor& b) { return sub(scalar_tensor(a, b.device()), b); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(scalar_tensor(a, b.device()), b); }
Tensor operator/(Scalar a, const Tensor& b) { return div(scalar_tensor(a, b.device()), b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }

}  // namespace loom
