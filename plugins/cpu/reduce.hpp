// The reduction kernels as register_reduce_kernels (reduce.cpp) sees them,
// one declaration per kernel, grouped by the file that defines it. Each is
// `void(const LoomKernelCall&)` and throws plugin::Failure on a bad call.
#pragma once

#include <loom/plugin_api.h>

namespace loom::cpu {

// reduce.cpp: sum (declared in kernels.hpp), mean, prod, all, any.
void mean(const LoomKernelCall& c);
void prod(const LoomKernelCall& c);
void all(const LoomKernelCall& c);
void any(const LoomKernelCall& c);

// reduce_minmax.cpp
void amax(const LoomKernelCall& c);
void amin(const LoomKernelCall& c);
void max_dim(const LoomKernelCall& c);
void min_dim(const LoomKernelCall& c);
void argmax(const LoomKernelCall& c);
void argmin(const LoomKernelCall& c);

// reduce_stats.cpp
void var(const LoomKernelCall& c);
void stddev(const LoomKernelCall& c);  // op "std"
void norm(const LoomKernelCall& c);
void logsumexp(const LoomKernelCall& c);

// reduce_scan.cpp
void cumsum(const LoomKernelCall& c);
void cumprod(const LoomKernelCall& c);

}  // namespace loom::cpu
