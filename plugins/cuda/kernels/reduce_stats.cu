// Statistics over dims on CUDA: var and std (Welford and Chan in double),
// norm (p = ±inf, 0, 1, 2 and general p, in double) and logsumexp
// (max-shifted, online). Floating dtypes only; the functors are in
// reduce_stats_ops.cuh, with the CPU plugin's semantics.
#include "dtype.cuh"
#include "reduce.hpp"
#include "reduce_kernels.cuh"
#include "reduce_stats_ops.cuh"
#include "vendor/gpu_target.hpp"

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

int32_t input_dtype(const LoomKernelCall& c, const char* name) {
  if (c.num_inputs < 1) throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + name + ": no input");
  return c.inputs[0].dtype;
}

template <class Op>
void run(const Op& op, const ReducePlan& plan, const LoomKernelCall& c, const char* name) {
  run_reduction(op, plan, c.inputs[0], c.inputs[0].device.index, static_cast<cudaStream_t>(c.stream), name);
}

// values: dims, FLOAT correction (None already resolved to 1 by the core).
void moments(const LoomKernelCall& c, const char* name, bool take_sqrt) {
  const int32_t dtype = input_dtype(c, name);
  const ReducePlan plan = prepare_reduction(c, name, 2, &dtype, 1);
  const double correction = plugin::value_float(c, 1);
  visit<DTypes::Floating>(dtype, name, [&](auto tag) {
    using T = decltype(tag);
    run(reduce::MomentsOp<T>{correction, take_sqrt, plugin::data_ptr<T>(c.outputs[0])}, plan, c, name);
  });
}

// values: dims, FLOAT p (±inf allowed).
void norm_kernel(const LoomKernelCall& c) {
  const int32_t dtype = input_dtype(c, "norm");
  const ReducePlan plan = prepare_reduction(c, "norm", 2, &dtype, 1);
  const double p = plugin::value_float(c, 1);
  if (p != p) throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " norm: p is NaN");
  visit<DTypes::Floating>(dtype, "norm", [&](auto tag) {
    using T = decltype(tag);
    run(reduce::NormOp<T>{reduce::norm_kind(p), p, plugin::data_ptr<T>(c.outputs[0])}, plan, c, "norm");
  });
}

void logsumexp_kernel(const LoomKernelCall& c) {
  const int32_t dtype = input_dtype(c, "logsumexp");
  const ReducePlan plan = prepare_reduction(c, "logsumexp", 1, &dtype, 1);
  visit<DTypes::Floating>(dtype, "logsumexp", [&](auto tag) {
    using T = decltype(tag);
    run(reduce::LseOp<T>{plugin::data_ptr<T>(c.outputs[0])}, plan, c, "logsumexp");
  });
}

}  // namespace

void var(const LoomKernelCall& c) { moments(c, "var", false); }
void stddev(const LoomKernelCall& c) { moments(c, "std", true); }
void norm(const LoomKernelCall& c) { norm_kernel(c); }
void logsumexp(const LoomKernelCall& c) { logsumexp_kernel(c); }

}  // namespace loom::LOOM_GPU_NAMESPACE
