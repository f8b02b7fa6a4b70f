// ops_fill_copy.cpp — fill_ and copy_ (strided copy and cast), the two
// kernels every conversion and factory is built on.
#include "autograd/formula.h"
#include "core_op.h"
#include "transfer.h"

#include <loom/error.h>
#include <loom/ops.h>

namespace loom {
namespace {

void prepare_fill(OpCall& call) {
  const Tensor& self = call.arg(0);
  const LoomValue& v = call.values[0];
  LOOM_CHECK(!(v.kind == LOOM_VALUE_FLOAT && is_integral(self.dtype(), true) &&
               v.u.f != static_cast<double>(static_cast<int64_t>(v.u.f))),
             "fill_: value ", v.u.f, " cannot be converted to ", name(self.dtype()),
             " without losing its fraction");
  prepare_self_output(call);
}

// src is broadcast to self's shape but keeps its dtype: the kernel casts.
void prepare_copy(OpCall& call) {
  const Tensor& self = call.arg(0);
  const Tensor& src = call.arg(1);
  DimVector b = broadcast_shapes("copy_", self.sizes(), src.sizes());
  LOOM_CHECK(std::equal(b.begin(), b.end(), self.sizes().begin(), self.sizes().end()),
             "copy_: source of shape ", shape_str(src.sizes()),
             " cannot be broadcast to the destination shape ", shape_str(self.sizes()));
  call.inputs.resize(2);
  call.inputs[0].tensor = self.impl();
  set_input(call, 1, src.dtype(), self.sizes());
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = self.dtype();
  plan.sizes = DimVector(self.sizes());
  plan.result = self;
}

LOOM_CORE_OP(fill_op, "fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)", prepare_fill, nullptr)
LOOM_CORE_OP(copy_op, "copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)", prepare_copy, nullptr)

// The old value of self is overwritten whole: its gradient is zero. src's is
// the incoming one (summed back over broadcast dims and cast by the node).
LOOM_DERIVATIVE(fill_op, "FillBackward0", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) {
                  if (c.needs_grad(0)) c.set(0, zeros_like(c.grad()));
                })
LOOM_DERIVATIVE(copy_op, "CopyBackwards", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) {
                  if (c.needs_grad(1)) c.set(1, c.grad());
                })
LOOM_DERIVATIVE_NAME(copy_op, [](const OpCall&) {
  const char* name = detail::CopyNodeName::current();
  return name ? name : "CopyBackwards";
})

}  // namespace

Tensor& Tensor::fill_(Scalar value) {
  detail::run_op(fill_op(), {this}, {value.abi()});
  return *this;
}

Tensor& Tensor::zero_() { return fill_(0); }

Tensor& Tensor::copy_(const Tensor& src) {
  LOOM_CHECK(src.defined(), "copy_: the source tensor is undefined");
  if (src.device() != device()) {
    // Move the bytes first (in the source dtype, only the elements src has),
    // then cast and broadcast on the destination device.
    Tensor moved = src.to(device());
    detail::run_op(copy_op(), {this, &moved});
    return *this;
  }
  detail::run_op(copy_op(), {this, &src});
  return *this;
}

}  // namespace loom
