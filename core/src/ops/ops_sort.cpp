// ops_sort.cpp — sort, argsort and topk. Both ops return (values, int64
// indices) shaped like the input (topk: k along dim); what the kernels see
// is docs/kernel_conventions.md, "Shape" (sort, topk).
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

namespace loom {
namespace {

LoomValue int_value(int64_t i) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT;
  v.u.i = i;
  return v;
}

// Input 0 is self in its own dtype and strides; values[0] (the dim) is
// wrapped (0 for a 0-d tensor); two outputs: values like self, int64 indices.
void prepare_sorted(OpCall& call, int64_t dim_size) {
  const Tensor& self = call.arg(0);
  call.inputs.resize(1);
  call.inputs[0].tensor = self.impl();
  call.compute_dtype = self.dtype();
  DimVector sizes(self.sizes());
  if (self.dim() > 0) sizes[call.values[0].u.i] = dim_size;
  for (int k = 0; k < 2; ++k) {
    auto& plan = call.outputs.emplace_back();
    plan.dtype = k == 0 ? self.dtype() : DType::Int64;
    plan.sizes = sizes;
  }
}

int64_t wrapped_dim_size(OpCall& call, size_t at) {
  const Tensor& self = call.arg(0);
  const int64_t d = wrap_dim(call.op->name(), call.values[at].u.i, self.dim());
  call.values[at].u.i = d;
  return self.dim() == 0 ? 1 : self.sizes()[d];
}

// sort(self, dim, descending, stable)
void prepare_sort(OpCall& call) { prepare_sorted(call, wrapped_dim_size(call, 0)); }

// topk(self, k, dim, largest, sorted): the kernel sees values[0] = k and
// values[1] = the wrapped dim; prepare_sorted reads the dim from values[0],
// so swap around it.
void prepare_topk(OpCall& call) {
  const Tensor& self = call.arg(0);
  LOOM_CHECK(self.dtype() != DType::Bool, "topk: not implemented for dtype bool (expected a number dtype)");
  const int64_t n = wrapped_dim_size(call, 1);
  const int64_t k = call.values[0].u.i;
  LOOM_CHECK(k >= 0 && k <= n, "topk: k (", k, ") is out of range for dimension ", call.values[1].u.i,
             " of size ", n, " (expected 0 <= k <= ", n, ")");
  std::swap(call.values[0], call.values[1]);
  prepare_sorted(call, k);
  std::swap(call.values[0], call.values[1]);
}

LOOM_CORE_OP(sort_op,
             "sort(Tensor self, int dim=-1, bool descending=False, bool stable=False) -> (Tensor values, Tensor indices)",
             prepare_sort, nullptr)
LOOM_CORE_OP(topk_op,
             "topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)",
             prepare_topk, nullptr)

// sort/topk: each value's gradient goes back to where it was taken from
// (values[dim_at] is the dim).
template <size_t DimAt>
void to_indices_backward(autograd::BackwardContext& c) {
  const Tensor g = c.grad(0);
  const IntArrayRef in = c.input_sizes(0);
  if (in.empty()) {
    c.set(0, g);
    return;
  }
  c.set(0, scatter(zeros(in, g.dtype(), g.device()), c.int_arg(DimAt), c.output(1), g));
}
LOOM_DERIVATIVE(sort_op, "SortBackward0", autograd::none(), autograd::outputs(1), to_indices_backward<0>)
LOOM_DERIVATIVE(topk_op, "TopkBackward0", autograd::none(), autograd::outputs(1), to_indices_backward<1>)

std::pair<Tensor, Tensor> run_pair(const OpDef& op, const Tensor& a, std::initializer_list<LoomValue> values) {
  OpCall call(op);
  call.args.push_back(&a);
  for (const LoomValue& v : values) call.values.push_back(v);
  dispatch(call);
  return {std::move(call.outputs[0].result), std::move(call.outputs[1].result)};
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim, bool descending, bool stable) {
  return run_pair(sort_op(), a, {int_value(dim), detail::bool_value(descending), detail::bool_value(stable)});
}

Tensor argsort(const Tensor& a, int64_t dim, bool descending, bool stable) {
  return sort(a, dim, descending, stable).second;
}

std::pair<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim, bool largest, bool sorted) {
  return run_pair(topk_op(), a, {int_value(k), int_value(dim), detail::bool_value(largest), detail::bool_value(sorted)});
}

}  // namespace loom
