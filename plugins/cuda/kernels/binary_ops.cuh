// The per-element functors of the binary and ternary CUDA kernels
// (binary.cu, compare.cu): loom's shared ones (loom/plugin/scalar_ops.hpp,
// whose integer rules, NaN rules and rounding every device keeps), and the
// optimizer steps this plugin fuses. __host__ __device__, so
// tests/elementwise_ops_test.cu checks the Adam steps on the host.
#pragma once

#include "scalar_math.cuh"

#include <loom/plugin/scalar_ops.hpp>
#include "vendor/gpu_target.hpp"

#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::ew {

// The elementwise ops' functors are loom's shared reference semantics
// (loom/plugin/scalar_ops.hpp), the same the CPU plugin runs.
using plugin::ops::Add;
using plugin::ops::Atan2;
using plugin::ops::BitAnd;
using plugin::ops::BitOr;
using plugin::ops::BitXor;
using plugin::ops::Div;
using plugin::ops::DivFloor;
using plugin::ops::DivTrunc;
using plugin::ops::Eq;
using plugin::ops::Ge;
using plugin::ops::Gt;
using plugin::ops::Le;
using plugin::ops::Lerp;
using plugin::ops::LogicalAnd;
using plugin::ops::LogicalOr;
using plugin::ops::LogicalXor;
using plugin::ops::Lt;
using plugin::ops::Maximum;
using plugin::ops::Minimum;
using plugin::ops::Mul;
using plugin::ops::Ne;
using plugin::ops::Pow;
using plugin::ops::Predicate;
using plugin::ops::Remainder;
using plugin::ops::Select;
using plugin::ops::Sub;

// ---------------------------------------------------------- optimizers ---

// Adam's parameter update, self - step_size * m / (sqrt(v) + eps), in the
// compute type and in the CPU kernel's order (optim_kernels.cpp), each step
// rounded once (no contraction into FMAs). Floating T only.
template <class T>
struct AdamUpdate {
  double step_size, eps;
  __host__ __device__ T operator()(T p, T m, T v) const {
    using V = opmath_t<T>;
    const V x = widen(p), mm = widen(m), vv = widen(v);
    return narrow<T>(sub_rn(x, mul_rn(V(step_size), mm) / add_rn(math::sqrt(vv), V(eps))));
  }
};

// The whole Adam/AdamW step of one element (op _adam_step_), in the order of
// the composite and the CPU kernel: p * decay (skipped at 1), both running
// averages by Lerp, then AdamUpdate's expression; float16/bfloat16 in float,
// each tensor rounded once. Floating T only.
template <class T>
struct AdamStep {
  double decay, beta1, beta2, step_size, eps;
  __host__ __device__ void operator()(T& p, T g, T& m, T& v) const {
    using V = opmath_t<T>;
    const V gg = widen(g);
    const V x = decay == 1.0 ? widen(p) : mul_rn(widen(p), V(decay));
    const V m1 = Lerp<V>{}(widen(m), gg, V(1 - beta1));
    const V v1 = Lerp<V>{}(widen(v), mul_rn(gg, gg), V(1 - beta2));
    p = narrow<T>(sub_rn(x, mul_rn(V(step_size), m1) / add_rn(math::sqrt(v1), V(eps))));
    m = narrow<T>(m1);
    v = narrow<T>(v1);
  }
};

}  // namespace loom::LOOM_GPU_NAMESPACE::ew
