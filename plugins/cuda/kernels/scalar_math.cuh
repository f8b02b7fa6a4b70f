// Scalar arithmetic the elementwise functors share: loom's shared helpers
// (loom/plugin/opmath.hpp), brought into the plugin's namespace. They are
// callable on the host (so the functors are testable without a GPU) and on
// the device:
//   - opmath_t / arith_t and their conversions: the compute-type rule;
//   - mul_rn / add_rn / sub_rn: products and sums rounded once each (nvcc
//     would contract `a + b * c` into one fma), keeping add's alpha, lerp and
//     friends bit-identical to the CPU plugin;
//   - math::name(x): <math.h> functions overloaded for float and double.
#pragma once

#include "dtype.cuh"

#include <loom/plugin/opmath.hpp>

namespace loom::LOOM_GPU_NAMESPACE {

namespace math = plugin::math;
using plugin::add_rn;
using plugin::from_bool;
using plugin::infinity;
using plugin::mul_rn;
using plugin::quiet_nan;
using plugin::sub_rn;

}  // namespace loom::LOOM_GPU_NAMESPACE
