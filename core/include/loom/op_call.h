// loom/op_call.h — one op call on its way through the dispatcher.
//
// dispatch(call) runs:  prepare (validate, compute outputs, cast and broadcast
// inputs)  ->  the device's kernel  ->  the op's composite  ->  the device's
// fallback  ->  an error listing where the op does have kernels.
// Op definitions in the core fill an OpCall and call dispatch(); composites
// call other ops. Everything here lives on the stack of one call.
#pragma once

#include <loom/detail/small_vector.h>
#include <loom/op_registry.h>
#include <loom/tensor.h>

#include <memory>
#include <vector>

namespace loom {

// Other sizes/strides over a tensor's memory (a broadcast, a keepdim form),
// stored in the OpCall's arena. ndim < 0: none, use the tensor's own.
struct View {
  const int64_t* sizes = nullptr;
  const int64_t* strides = nullptr;
  int32_t ndim = -1;
  explicit operator bool() const { return ndim >= 0; }
  IntArrayRef sizes_ref() const { return {sizes, static_cast<size_t>(ndim)}; }
  IntArrayRef strides_ref() const { return {strides, static_cast<size_t>(ndim)}; }
};

// What a kernel reads for one tensor argument: the tensor (or a cast of it)
// and optionally a view of it.
struct Operand {
  const TensorImpl* tensor = nullptr;  // nullptr marks an absent "Tensor?"
  View view;
};

// One result: its dtype and shape, the tensor once allocated (or the mutated
// argument for in-place ops), and optionally the view the kernel sees.
struct OutputPlan {
  DType dtype = DType::Float32;
  DimVector sizes;
  Tensor result;
  View kernel_view;
};

class Generator;
namespace detail {
// A Generator argument on its way from a frontend to the op's prepare:
// LoomValue.kind kValueGenerator with u.i the generator's GeneratorImpl*
// (the caller keeps the Generator alive for the call). Core-internal, not
// part of the plugin ABI: the random ops' prepare replaces it with an
// INT_LIST {seed, offset} before any kernel sees the call.
inline constexpr int32_t kValueGenerator = 1000;
// A NONE value for nullptr, else a kValueGenerator value for *g.
LoomValue generator_value(const Generator* g);
}  // namespace detail

struct OpCall {
  explicit OpCall(const OpDef& def) : op(&def) {}
  OpCall(const OpCall&) = delete;
  OpCall& operator=(const OpCall&) = delete;

  const OpDef* op;
  // Arguments, in schema order (borrowed: the caller keeps them alive).
  detail::SmallVector<const Tensor*, 4> args;  // Tensor arguments; nullptr = absent
  detail::SmallVector<LoomValue, 4> values;    // every other argument
  Device device;                                // set by dispatch

  // Filled by prepare.
  detail::SmallVector<Operand, 4> inputs;       // one per args entry
  detail::SmallVector<OutputPlan, 1> outputs;
  DType compute_dtype = DType::Float32;         // checked against kernel masks
  detail::SmallVector<Tensor, 2> temps;         // keeps casts alive
  DimVector list_storage;                       // backs a rewritten INT_LIST value
  // out= arguments, one per output (nullptr: allocate as usual). dispatch
  // resizes each to its output's shape, checks the dtype can hold the
  // result, writes into it directly when the layout allows, else copies.
  detail::SmallVector<Tensor*, 1> out_args;

  const Tensor& arg(size_t i) const { return *args[i]; }
  Tensor& result(size_t i = 0) { return outputs[i].result; }

  // Copies sizes/strides into the call's arena; valid for the call's life.
  View make_view(IntArrayRef sizes, IntArrayRef strides) {
    View v;
    v.ndim = static_cast<int32_t>(sizes.size());
    int64_t* p = arena_alloc(2 * sizes.size());
    std::copy(sizes.begin(), sizes.end(), p);
    std::copy(strides.begin(), strides.end(), p + sizes.size());
    v.sizes = p;
    v.strides = p + sizes.size();
    return v;
  }

 private:
  // Views live here rather than in per-operand vectors: building and
  // destroying those cost more than the rest of a small op's dispatch.
  int64_t* arena_alloc(size_t n) {
    if (arena_used_ + n <= kArena) {
      int64_t* p = arena_ + arena_used_;
      arena_used_ += n;
      return p;
    }
    overflow_.emplace_back(new int64_t[n]);
    return overflow_.back().get();
  }
  static constexpr size_t kArena = 64;
  int64_t arena_[kArena];
  size_t arena_used_ = 0;
  std::vector<std::unique_ptr<int64_t[]>> overflow_;
};

// Runs a call end to end; results are in call.outputs[i].result (the
// out_args tensors themselves where given).
void dispatch(OpCall& call);

// Runs the device kernel, composite or fallback of an already prepared call
// on call.device (used by dispatch and by the CPU fallback).
void run_prepared(OpCall& call);

namespace detail {
// A fresh row-major tensor on `device`.
Tensor empty_contiguous(Device device, DType dtype, IntArrayRef sizes);
// Allocates every output that has no tensor yet.
void allocate_outputs(OpCall& call);
// Calls `entry` with descriptors for the prepared operands and outputs.
// Returns the kernel's error (owned by the caller) or nullptr. `role` names
// the entry in the error of a C++ exception escaping it ("the kernel for op
// 'neg' on ...", "the boxed fallback for op ..."). `as_op`, when given, is
// the op the kernel sees in LoomKernelCall::op (an in-place call running its
// functional form's kernel); otherwise the call's own.
LoomError* invoke_kernel(const KernelEntry& entry, OpCall& call, const char* role = "kernel",
                         const OpDef* as_op = nullptr);
// The host's CPU fallback for a prepared call on a non-CPU device.
void cpu_fallback(OpCall& call);
// out= handling around run_prepared (core/src/runtime/out_args.cpp).
void bind_out_args(OpCall& call);
void finish_out_args(OpCall& call);
}  // namespace detail

// ---- helpers for prepare functions ------------------------------------------

// Broadcast shape of two shapes, or throws naming the op and both shapes.
DimVector broadcast_shapes(std::string_view op, IntArrayRef a, IntArrayRef b);
// Strides that read `t` as `shape` (stride 0 on broadcast dims).
DimVector broadcast_strides(IntArrayRef t_sizes, IntArrayRef t_strides, IntArrayRef shape);
// PyTorch's result_type over the call's defined tensor arguments, or over
// some of them.
DType result_type(const OpCall& call);
DType result_type(std::initializer_list<const Tensor*> tensors, std::string_view op);
// The broadcast shape of every defined tensor argument.
DimVector broadcast_all(const OpCall& call);
// `i` wrapped into [0, ndim) or throws naming the op.
int64_t wrap_dim(std::string_view op, int64_t dim, int64_t ndim);

// Sets input i to read `t` cast to `dtype` and broadcast to `shape`.
void set_input(OpCall& call, size_t i, DType dtype, IntArrayRef shape);
// Elementwise op: every tensor argument cast to `compute` and broadcast to
// the common shape; one output of dtype `out`.
void prepare_elementwise(OpCall& call, DType compute, DType out);
// In-place elementwise op: output is args[0]; the others are cast to its
// dtype and broadcast to its shape (which must not grow).
void prepare_inplace(OpCall& call);
// An op that writes args[0] whole and reads nothing else (fill_, uniform_):
// input 0 and output 0 are args[0], computing in its dtype.
void prepare_self_output(OpCall& call);
// The composite of every in-place op "name_" whose device has no kernel for
// it: run "name" out of place, then copy into self.
void inplace_via_out_of_place(OpCall& call);

}  // namespace loom
