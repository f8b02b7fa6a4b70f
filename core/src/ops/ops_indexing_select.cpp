// ops_indexing_select.cpp — the ops whose output size depends on the data:
// nonzero and masked_select.
//
// An OutputPlan needs its shape before the kernel runs, so prepare first
// counts the selected elements with ordinary loom ops (ne + sum, on the
// call's device: one scalar comes back to the host, as PyTorch's CUDA
// nonzero synchronises) and plans an output of exactly that size. The kernel
// then only fills it, and fails if it finds a different count. No core
// machinery changes; see docs/kernel_conventions.md, "Indexing".
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

namespace loom {
namespace {

int64_t count_true(const Tensor& t) {
  const Tensor b = t.dtype() == DType::Bool ? t : ne(t, Scalar(0));
  return loom::sum(b).item<int64_t>();
}

// nonzero(self) -> int64 [n, self.dim()].
void prepare_nonzero(OpCall& call) {
  const Tensor& self = call.arg(0);
  call.inputs.resize(1);
  call.inputs[0].tensor = self.impl();
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = DType::Int64;
  plan.sizes = {count_true(self), self.dim()};
}

// masked_select(self, mask) -> [n]: self and the bool mask broadcast together.
void prepare_masked_select(OpCall& call) {
  const char* op = "masked_select";
  const Tensor& self = call.arg(0);
  const Tensor& mask = call.arg(1);
  LOOM_CHECK(mask.dtype() == DType::Bool, op, ": expected mask to have dtype bool, got ", name(mask.dtype()));
  const DimVector shape = broadcast_shapes(op, self.sizes(), mask.sizes());
  call.inputs.resize(2);
  set_input(call, 0, self.dtype(), shape);
  set_input(call, 1, DType::Bool, shape);
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = self.dtype();
  plan.sizes = {count_true(IntArrayRef(shape) == mask.sizes() ? mask : mask.expand(shape))};
}

LOOM_CORE_OP(nonzero_op, "nonzero(Tensor self) -> Tensor", prepare_nonzero, nullptr)
LOOM_CORE_OP(masked_select_op, "masked_select(Tensor self, Tensor mask) -> Tensor", prepare_masked_select,
             nullptr)

LOOM_NOT_DIFFERENTIABLE(nonzero_op)
// The gradient goes back to the selected positions of self (broadcast with
// the mask; the node sums the broadcast away), in order.
LOOM_DERIVATIVE(masked_select_op, "MaskedSelectBackward0", autograd::inputs(1), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const Tensor mask = c.input(1);
                  const Tensor g = c.grad();
                  const DimVector shape = broadcast_shapes("masked_select", c.input_sizes(0), mask.sizes());
                  const Tensor positions = nonzero(mask.expand(shape).reshape({-1})).view({-1});
                  Tensor r = zeros({shape_numel(shape)}, g.dtype(), g.device());
                  c.set(0, index_add_(r, 0, positions, g).view(shape));
                })

}  // namespace

Tensor nonzero(const Tensor& self) { return detail::run_op(nonzero_op(), {&self}); }

std::vector<Tensor> nonzero_as_tuple(const Tensor& self) {
  // As PyTorch: a 0-d input counts as 1-D.
  const Tensor nz = nonzero(self.dim() == 0 ? self.view({1}) : self);
  std::vector<Tensor> out;
  for (int64_t d = 0; d < nz.size(1); ++d) out.push_back(nz.select(1, d));
  return out;
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  return detail::run_op(masked_select_op(), {&self, &mask});
}

}  // namespace loom
