// ops_nn.cpp — softmax, log_softmax (CPU kernels, plus a composite for
// devices without one). What a softmax kernel sees is
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

// The fused backwards, from the saved output y (a 0-d softmax is constant:
// no gradient). softmax: y (g - Σ g y); log_softmax: g - exp(y) Σ g.
int64_t softmax_dim(const autograd::BackwardContext& c) {
  const int64_t d = c.int_arg(0);
  return d < 0 ? d + static_cast<int64_t>(c.input_sizes(0).size()) : d;
}

LOOM_DERIVATIVE_IN_FLOAT(softmax_op, "SoftmaxBackward0", autograd::none(), autograd::outputs(0),
                [](autograd::BackwardContext& c) {
                  if (c.input_sizes(0).empty()) return;
                  const Tensor y = c.output(0), g = c.grad();
                  c.set(0, y * (g - sum(g * y, IntArrayRef{softmax_dim(c)}, true)));
                })
LOOM_DERIVATIVE_IN_FLOAT(log_softmax_op, "LogSoftmaxBackward0", autograd::none(), autograd::outputs(0),
                [](autograd::BackwardContext& c) {
                  if (c.input_sizes(0).empty()) return;
                  const Tensor g = c.grad();
                  c.set(0, g - exp(c.output(0)) * sum(g, IntArrayRef{softmax_dim(c)}, true));
                })

LoomValue int_value(int64_t i) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT;
  v.u.i = i;
  return v;
}

}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return detail::run_op(softmax_op(), {&self}, {int_value(dim), detail::dtype_value(dtype)});
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return detail::run_op(log_softmax_op(), {&self}, {int_value(dim), detail::dtype_value(dtype)});
}

}  // namespace loom
