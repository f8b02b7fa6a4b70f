// ops_indexing_util.h (core-internal) — small prepare helpers shared by the
// indexing ops (ops_indexing*.cpp, ops_advanced_index.cpp).
#pragma once

#include <loom/error.h>
#include <loom/op_call.h>

#include <string_view>

namespace loom::detail {

// Index tensors are int64 (and int32 where PyTorch takes it).
inline void check_index_dtype(std::string_view op, const Tensor& index, bool int32_ok) {
  const DType t = index.dtype();
  LOOM_CHECK(t == DType::Int64 || (int32_ok && t == DType::Int32), op, ": expected index to have dtype ",
             int32_ok ? "int64 or int32" : "int64", ", got ", name(t));
}

// Kernels never see 0-d tensors here: input i, when 0-d, is read as [1].
inline void view_as_1d_if_scalar(OpCall& call, size_t i) {
  if (call.inputs[i].tensor->dim() != 0) return;
  const int64_t one = 1;
  call.inputs[i].view = call.make_view(IntArrayRef(&one, 1), IntArrayRef(&one, 1));
}

// A 0-d/1-D index read as `shape`: stride 0 everywhere but `dim`, where
// position i reads index[i].
inline Operand index_along(OpCall& call, const Tensor& index, IntArrayRef shape, int64_t dim) {
  DimVector strides(shape.size(), 0);
  strides[static_cast<size_t>(dim)] = index.dim() == 0 ? 0 : index.strides()[0];
  Operand o;
  o.tensor = index.impl();
  o.view = call.make_view(shape, strides);
  return o;
}

// The in-place op's output is self (read as [1] when 0-d). As PyTorch, a
// self with several elements at one address (an expanded tensor) is
// refused: the kernels' parallel writes assume distinct positions are
// distinct memory.
inline void self_output(OpCall& call, Tensor& self) {
  for (int64_t d = 0; d < self.dim(); ++d)
    LOOM_CHECK(self.strides()[d] != 0 || self.sizes()[d] <= 1, call.op->name(),
               ": self has more than one element at the same memory location (stride 0 at dimension ", d,
               "); clone it first");
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = self.dtype();
  plan.sizes = DimVector(self.sizes());
  plan.result = self;
  if (self.dim() == 0) {
    const int64_t one = 1;
    plan.kernel_view = call.make_view(IntArrayRef(&one, 1), IntArrayRef(&one, 1));
  }
}

}  // namespace loom::detail
