// The element-wise reductions of the gloo plugin's reducing collectives, per
// dtype and LOOM_COMM_* reduce op, as gloo's type-erased reduce function.
// They are loom's own ops (loom/plugin/scalar_ops.hpp: add wraps integers,
// maximum/minimum propagate NaN, bool sum is `or`), so a reduction over ranks
// gives what loom's add/mul/maximum/minimum of the same tensors give.
#pragma once

#include <loom/comm_api.h>

#include <cstddef>
#include <functional>

namespace loom::gloo_plugin {

using ReduceFn = std::function<void(void* out, const void* a, const void* b, size_t n)>;

// Throws plugin::Failure (UNSUPPORTED) for a dtype or op it lacks.
ReduceFn reduce_function(int32_t dtype, int32_t reduce_op);

}  // namespace loom::gloo_plugin
