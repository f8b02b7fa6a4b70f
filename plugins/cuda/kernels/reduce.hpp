// The CUDA reduction kernels as register_reduce_kernels (reduce.cu) sees
// them, grouped by the file that defines them. Each is
// `void(const LoomKernelCall&)` and throws plugin::Failure on a bad call.
#pragma once

#include "vendor/gpu_target.hpp"

#include <loom/plugin_api.h>

namespace loom::LOOM_GPU_NAMESPACE {

// reduce.cu: shared by the reduction and scan launchers.
// Multiprocessors of device `index`, asked once (launch shapes aim to fill them).
int multiprocessor_count(int index);
// Throws DEVICE_ERROR naming `op` when the last launch failed.
void check_launch(const char* op);

// reduce_minmax.cu
void amax(const LoomKernelCall& c);
void amin(const LoomKernelCall& c);
void max_dim(const LoomKernelCall& c);
void min_dim(const LoomKernelCall& c);
void argmax(const LoomKernelCall& c);
void argmin(const LoomKernelCall& c);

// reduce_stats.cu
void var(const LoomKernelCall& c);
void stddev(const LoomKernelCall& c);  // op "std"
void norm(const LoomKernelCall& c);
void logsumexp(const LoomKernelCall& c);

// scan.cu
void cumsum(const LoomKernelCall& c);
void cumprod(const LoomKernelCall& c);

}  // namespace loom::LOOM_GPU_NAMESPACE
