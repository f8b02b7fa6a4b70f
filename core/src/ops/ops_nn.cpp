// ops_nn.cpp — softmax, log_softmax and their gradient ops (CPU kernels,
// plus a composite for devices without one). What a softmax kernel sees is
// docs/kernel_conventions.md, "Nn". Attention is in ops_attention.cpp.
#include "autograd/formula.h"
#include "core_op.h"
#include "opmath.h"

#include <loom/error.h>
#include <loom/ops.h>

namespace loom {
namespace {

// softmax(self, dim, dtype): the kernel gets the input already in the
// result dtype, values[0] the dim wrapped to [0, ndim), and a 0-d tensor as
// a one-element 1-d one.
void prepare_softmax(OpCall& call) {
  const Tensor& self = call.arg(0);
  const std::string& op = call.op->name();
  const int64_t dim = wrap_dim(op, call.values[0].u.i, self.dim());
  const DType out = call.values[1].kind == LOOM_VALUE_DTYPE ? static_cast<DType>(call.values[1].u.i)
                                                             : self.dtype();
  LOOM_CHECK(is_floating_point(out), op, ": expected a floating point input (or a floating dtype argument), got ",
             name(out));
  call.values[0].u.i = self.dim() == 0 ? 0 : dim;
  call.inputs.resize(1);
  set_input(call, 0, out, self.sizes());
  call.compute_dtype = out;
  auto& plan = call.outputs.emplace_back();
  plan.dtype = out;
  plan.sizes = DimVector(self.sizes());
  if (self.dim() == 0) {
    const int64_t one = 1;
    call.inputs[0].view = call.make_view(IntArrayRef(&one, 1), IntArrayRef(&one, 1));
    plan.kernel_view = call.make_view(IntArrayRef(&one, 1), IntArrayRef(&one, 1));
  }
}

// The composite, for devices with no kernel: max-shifted, from other ops,
// in float32 for the 16-bit floats (as the kernels compute).
template <bool Log>
void softmax_composite(OpCall& call) {
  const int64_t dim = call.values[0].u.i;
  const DType out = call.outputs[0].dtype;
  const DType compute = detail::opmath_dtype(out);
  const Tensor x = call.arg(0).to(compute);
  const Tensor shifted = x.dim() == 0 ? x - x : x - amax(x, IntArrayRef{dim}, true);
  if constexpr (Log) {
    call.result() = (shifted - log(sum(exp(shifted), IntArrayRef{dim}, true))).to(out);
  } else {
    const Tensor e = exp(shifted);
    call.result() = (e / sum(e, IntArrayRef{dim}, true)).to(out);
  }
}

LOOM_CORE_OP(softmax_op, "softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
             prepare_softmax, softmax_composite<false>)
LOOM_CORE_OP(log_softmax_op, "log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
             prepare_softmax, softmax_composite<true>)

// ------------------------------------------------------- the gradient ops ---
// _softmax_backward(grad_output, output, dim) and _log_softmax_backward:
// grad_output and the forward's result y in their promoted floating dtype,
// one shape (no broadcasting), dim wrapped. softmax: y (g - Σ g y);
// log_softmax: g - exp(y) Σ g, the sums along dim. A 0-d forward (its
// result is constant) never reaches them.
void prepare_softmax_backward(OpCall& call) {
  const Tensor& g = call.arg(0);
  const Tensor& y = call.arg(1);
  const std::string& op = call.op->name();
  LOOM_CHECK(is_floating_point(g.dtype()) && is_floating_point(y.dtype()), op,
             ": expected floating point grad_output and output, got ", name(g.dtype()), " and ", name(y.dtype()));
  LOOM_CHECK(g.sizes() == y.sizes(), op, ": expected grad_output of the output's shape ", shape_str(y.sizes()),
             ", got ", shape_str(g.sizes()));
  LOOM_CHECK(y.dim() > 0, op, ": expected an output of at least 1 dim");
  call.values[0].u.i = wrap_dim(op, call.values[0].u.i, y.dim());
  const DType t = promote_types(g.dtype(), y.dtype());
  call.inputs.resize(2);
  set_input(call, 0, t, g.sizes());
  set_input(call, 1, t, y.sizes());
  call.compute_dtype = t;
  auto& plan = call.outputs.emplace_back();
  plan.dtype = t;
  plan.sizes = DimVector(y.sizes());
}

// In float32 for the 16-bit floats, as the kernels compute.
template <bool Log>
void softmax_backward_composite(OpCall& call) {
  const int64_t dim = call.values[0].u.i;
  const DType out = call.outputs[0].dtype;
  const DType compute = detail::opmath_dtype(out);
  const Tensor g = call.arg(0).to(compute), y = call.arg(1).to(compute);
  if constexpr (Log)
    call.result() = (g - exp(y) * sum(g, IntArrayRef{dim}, true)).to(out);
  else
    call.result() = (y * (g - sum(g * y, IntArrayRef{dim}, true))).to(out);
}

LOOM_CORE_OP(softmax_backward_op, "_softmax_backward(Tensor grad_output, Tensor output, int dim) -> Tensor",
             prepare_softmax_backward, softmax_backward_composite<false>)
LOOM_CORE_OP(log_softmax_backward_op, "_log_softmax_backward(Tensor grad_output, Tensor output, int dim) -> Tensor",
             prepare_softmax_backward, softmax_backward_composite<true>)

// The derivatives call the gradient ops with the saved output (a 0-d
// softmax is constant: no gradient).
template <bool Log>
void softmax_derivative(autograd::BackwardContext& c) {
  if (c.input_sizes(0).empty()) return;
  const Tensor g = c.grad(), y = c.output(0);
  const LoomValue dim = detail::int_value(c.int_arg(0));
  c.set(0, detail::run_op(Log ? log_softmax_backward_op() : softmax_backward_op(), {&g, &y}, {dim}));
}
LOOM_DERIVATIVE_IN_FLOAT(softmax_op, "SoftmaxBackward0", autograd::none(), autograd::outputs(0),
                         softmax_derivative<false>)
LOOM_DERIVATIVE_IN_FLOAT(log_softmax_op, "LogSoftmaxBackward0", autograd::none(), autograd::outputs(0),
                         softmax_derivative<true>)

}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return detail::run_op(softmax_op(), {&self}, {detail::int_value(dim), detail::dtype_value(dtype)});
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return detail::run_op(log_softmax_op(), {&self}, {detail::int_value(dim), detail::dtype_value(dtype)});
}

}  // namespace loom
