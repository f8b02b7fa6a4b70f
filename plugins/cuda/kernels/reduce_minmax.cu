// Value and index extremes on CUDA: amax, amin (values), max.dim, min.dim
// (values and int64 indices), argmax, argmin (indices). NaN wins, and the
// first of equal extremes (the first NaN among NaNs) is chosen; see ArgOp in
// reduce_ops.cuh. One ArgOp instantiation per dtype serves both index forms.
#include "dtype.cuh"
#include "reduce.hpp"
#include "reduce_kernels.cuh"
#include "reduce_ops.cuh"
#include "vendor/gpu_target.hpp"

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

template <bool IsMax>
void extreme(const LoomKernelCall& c, const char* name) {
  if (c.num_inputs < 1) throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + name + ": no input");
  const int32_t dtype = c.inputs[0].dtype;
  const ReducePlan plan = prepare_reduction(c, name, 1, &dtype, 1);
  visit<DTypes::All>(dtype, name, [&](auto tag) {
    using T = decltype(tag);
    run_reduction(reduce::ExtremeOp<T, IsMax>{plugin::data_ptr<T>(c.outputs[0])}, plan, c.inputs[0],
                  c.inputs[0].device.index, static_cast<cudaStream_t>(c.stream), name);
  });
}

// Index ops reduce one dim (the core flattens for a dim-less argmax); more
// would make "the index" ambiguous.
void expect_one_dim(const LoomKernelCall& c, const char* name) {
  if (c.num_values < 1)
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + name + ": missing the dim");
  const LoomValue& v = c.values[0];
  if (v.kind == LOOM_VALUE_INT_LIST && v.u.ints.size > 1)
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + name + ": expected one reduced dim, got " +
                                                            std::to_string(v.u.ints.size));
}

// WithValues: outputs {values, indices} (max.dim); else {indices} (argmax).
template <bool IsMax, bool WithValues>
void arg_extreme(const LoomKernelCall& c, const char* name) {
  expect_one_dim(c, name);
  if (c.num_inputs < 1) throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + name + ": no input");
  const int32_t dtype = c.inputs[0].dtype;
  const int32_t dtypes[2] = {WithValues ? dtype : LOOM_DTYPE_INT64, LOOM_DTYPE_INT64};
  const ReducePlan plan = prepare_reduction(c, name, 1, dtypes, WithValues ? 2 : 1);
  visit<DTypes::All>(dtype, name, [&](auto tag) {
    using T = decltype(tag);
    const reduce::ArgOp<T, IsMax> op{WithValues ? plugin::data_ptr<T>(c.outputs[0]) : nullptr,
                                     plugin::data_ptr<int64_t>(c.outputs[WithValues ? 1 : 0])};
    run_reduction(op, plan, c.inputs[0], c.inputs[0].device.index, static_cast<cudaStream_t>(c.stream), name);
  });
}

}  // namespace

void amax(const LoomKernelCall& c) { extreme<true>(c, "amax"); }
void amin(const LoomKernelCall& c) { extreme<false>(c, "amin"); }
void max_dim(const LoomKernelCall& c) { arg_extreme<true, true>(c, "max.dim"); }
void min_dim(const LoomKernelCall& c) { arg_extreme<false, true>(c, "min.dim"); }
void argmax(const LoomKernelCall& c) { arg_extreme<true, false>(c, "argmax"); }
void argmin(const LoomKernelCall& c) { arg_extreme<false, false>(c, "argmin"); }

}  // namespace loom::LOOM_GPU_NAMESPACE
