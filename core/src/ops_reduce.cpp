// ops_reduce.cpp — sum over all or some dims.
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <algorithm>

namespace loom {
namespace {

// values: dim (int[]?), keepdim (bool), dtype (ScalarType?).
// The kernel sees the output in keepdim form and the reduced dims sorted,
// unique and non-negative (docs/kernel_conventions.md).
void prepare_sum(OpCall& call) {
  const Tensor& self = call.arg(0);
  const int64_t nd = self.dim();
  const LoomValue& dims = call.values[0];
  const bool keepdim = call.values[1].u.i != 0;
  std::vector<bool> reduced(static_cast<size_t>(nd), false);
  if (dims.kind == LOOM_VALUE_INT_LIST && dims.u.ints.size > 0) {
    for (int64_t i = 0; i < dims.u.ints.size; ++i) {
      const int64_t d = wrap_dim(call.op->name(), dims.u.ints.data[i], nd);
      if (nd == 0) continue;  // dim 0 / -1 of a 0-d tensor reduces nothing
      LOOM_CHECK(!reduced[d], call.op->name(), ": dim ", d,
                 " appears multiple times in the list of dims");
      reduced[d] = true;
    }
  } else {
    std::fill(reduced.begin(), reduced.end(), true);
  }
  DType out = self.dtype();
  if (call.values[2].kind == LOOM_VALUE_DTYPE) out = static_cast<DType>(call.values[2].u.i);
  else if (is_integral(out, true)) out = DType::Int64;

  call.list_storage.clear();
  DimVector keep_sizes, result_sizes;
  for (int64_t d = 0; d < nd; ++d) {
    if (reduced[d]) call.list_storage.push_back(d);
    keep_sizes.push_back(reduced[d] ? 1 : self.sizes()[d]);
    if (!reduced[d] || keepdim) result_sizes.push_back(keep_sizes.back());
  }
  call.values[0] = detail::int_list_value(call.list_storage);
  call.inputs.resize(1);
  set_input(call, 0, out, self.sizes());
  call.compute_dtype = out;
  auto& plan = call.outputs.emplace_back();
  plan.dtype = out;
  plan.sizes = result_sizes;
  if (!keepdim) {
    plan.kernel_view = call.make_view(keep_sizes, contiguous_strides(keep_sizes));
  }
}

LOOM_CORE_OP(sum_op,
             "sum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
             prepare_sum, nullptr)

}  // namespace

Tensor sum(const Tensor& a, std::optional<DType> dtype) {
  return detail::run_op(sum_op(), {&a},
                        {detail::none_value(), detail::bool_value(false), detail::dtype_value(dtype)});
}

Tensor sum(const Tensor& a, IntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  return detail::run_op(sum_op(), {&a},
                        {detail::int_list_value(dim), detail::bool_value(keepdim),
                         detail::dtype_value(dtype)});
}

Tensor Tensor::sum() const { return loom::sum(*this); }
Tensor Tensor::sum(IntArrayRef dim, bool keepdim) const { return loom::sum(*this, dim, keepdim); }

}  // namespace loom
