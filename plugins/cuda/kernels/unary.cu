// Unary CUDA kernels that keep the dtype or classify values — neg, relu,
// abs, sign, square, floor, ceil, trunc, round, nan_to_num, clamp,
// logical_not, isnan, isinf, isfinite — with the dtype masks the CPU plugin
// registers (docs/kernel_conventions.md, "Elementwise unary ops"), and the
// elementwise family's registration entry. Functors: unary_ops.cuh; the
// driver: unary_driver.cuh.
#include "../device.hpp"
#include "unary_driver.cuh"
#include "unary_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <cmath>
#include <limits>

namespace loom::LOOM_GPU_NAMESPACE::ew {
namespace {

// A family whose functor takes no values.
#define LOOM_CUDA_UNARY(Family, op_name, copies, Functor) \
  struct Family {                                                   \
    static constexpr const char* name = op_name;                    \
    static constexpr bool copies_integers = copies;                 \
    template <class T>                                              \
    static Functor make(const LoomKernelCall&) {                    \
      return {};                                                    \
    }                                                               \
  };

template <class T> using FloorOp = RoundTo<Rounding::Floor, T>;
template <class T> using CeilOp = RoundTo<Rounding::Ceil, T>;
template <class T> using TruncOp = RoundTo<Rounding::Trunc, T>;
template <class T> using IsNanOp = IsClass<FpClass::Nan, T>;
template <class T> using IsInfOp = IsClass<FpClass::Inf, T>;
template <class T> using IsFiniteOp = IsClass<FpClass::Finite, T>;

LOOM_CUDA_UNARY(NegFamily, "neg", false, Neg<T>)
LOOM_CUDA_UNARY(ReluFamily, "relu", false, Relu<T>)
LOOM_CUDA_UNARY(AbsFamily, "abs", false, Abs<T>)
LOOM_CUDA_UNARY(SignFamily, "sign", false, Sign<T>)
LOOM_CUDA_UNARY(SquareFamily, "square", false, Square<T>)  // the core casts bool to int64
LOOM_CUDA_UNARY(FloorFamily, "floor", true, FloorOp<T>)
LOOM_CUDA_UNARY(CeilFamily, "ceil", true, CeilOp<T>)
LOOM_CUDA_UNARY(TruncFamily, "trunc", true, TruncOp<T>)
LOOM_CUDA_UNARY(LogicalNotFamily, "logical_not", false, LogicalNot<T>)
LOOM_CUDA_UNARY(IsNanFamily, "isnan", false, IsNanOp<T>)
LOOM_CUDA_UNARY(IsInfFamily, "isinf", false, IsInfOp<T>)
LOOM_CUDA_UNARY(IsFiniteFamily, "isfinite", false, IsFiniteOp<T>)

#undef LOOM_CUDA_UNARY

// round(x, decimals): values[0] is an INT.
struct RoundFamily {
  static constexpr const char* name = "round";
  static constexpr bool copies_integers = true;
  template <class T>
  static Round<T> make(const LoomKernelCall& c) {
    const LoomValue& v = value_at(c, name, 0);
    if (v.kind != LOOM_VALUE_INT) [[unlikely]]
      fail_args(name, "decimals must be an int, got value kind " + std::to_string(v.kind));
    const double d = static_cast<double>(v.u.i);
    return {static_cast<opmath_t<T>>(std::pow(10.0, std::fabs(d))), d < 0};
  }
};

// The largest finite value of floating T, in its compute type.
template <class T>
opmath_t<T> finite_max() {
  if constexpr (std::is_same_v<T, __half>) return 65504.0f;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return 0x1.fep127f;
  else return std::numeric_limits<T>::max();
}

// nan_to_num(nan, posinf, neginf): the core resolves None, but a direct
// caller may pass NONE, which takes PyTorch's default (0, max, lowest).
struct NanToNumFamily {
  static constexpr const char* name = "nan_to_num";
  static constexpr bool copies_integers = true;
  template <class T>
  static NanToNum<T> make(const LoomKernelCall& c) {
    const opmath_t<T> defaults[3] = {0, finite_max<T>(), -finite_max<T>()};
    opmath_t<T> v[3];
    for (int32_t i = 0; i < 3; ++i)
      v[i] = value_at(c, name, i).kind == LOOM_VALUE_NONE ? defaults[i] : scalar_in_dtype<T>(c, name, i);
    return {v[0], v[1], v[2]};
  }
};

// clamp(min, max), each a Scalar or NONE. Integer bounds saturate to T's
// range (a bound beyond it clamps like the nearest representable one);
// float bounds on an integer T saturate as casts do; float T rounds the
// bound to T first.
struct ClampFamily {
  static constexpr const char* name = "clamp";
  static constexpr bool copies_integers = false;
  template <class T>
  static opmath_t<T> bound(const LoomKernelCall& c, int32_t i) {
    if constexpr (is_integer_v<T>) {
      if (c.values[i].kind == LOOM_VALUE_FLOAT) return scalar_arg<T>(c, name, i);  // saturates
      const int64_t b = scalar_arg<int64_t>(c, name, i);
      if (b < static_cast<int64_t>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
      if (b > static_cast<int64_t>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
      return static_cast<T>(b);
    } else {
      return scalar_in_dtype<T>(c, name, i);
    }
  }
  template <class T>
  static Clamp<T> make(const LoomKernelCall& c) {
    using L = std::numeric_limits<opmath_t<T>>;
    const bool has_lo = value_at(c, name, 0).kind != LOOM_VALUE_NONE;
    const bool has_hi = value_at(c, name, 1).kind != LOOM_VALUE_NONE;
    Clamp<T> f{};
    if constexpr (is_integer_v<T>) {
      f.lo = has_lo ? bound<T>(c, 0) : L::min();
      f.hi = has_hi ? bound<T>(c, 1) : L::max();
    } else {
      f.lo = has_lo ? bound<T>(c, 0) : -L::infinity();
      f.hi = has_hi ? bound<T>(c, 1) : L::infinity();
      f.nan_bound = f.lo != f.lo || f.hi != f.hi;
    }
    return f;
  }
};

}  // namespace

void register_unary_kernels(plugin::Registrar& r) {
  register_unary<NegFamily>(r);
  register_unary<ReluFamily>(r);
  register_unary<AbsFamily>(r);
  register_unary<SignFamily>(r);
  register_unary<SquareFamily>(r);
  register_unary<FloorFamily>(r);
  register_unary<CeilFamily>(r);
  register_unary<TruncFamily>(r);
  register_unary<RoundFamily>(r);
  register_unary<NanToNumFamily>(r);
  register_unary<ClampFamily>(r);
  // To-bool ops have no in-place form: self could not hold the result.
  register_unary<LogicalNotFamily>(r);
  register_unary<IsNanFamily>(r);
  register_unary<IsInfFamily>(r);
  register_unary<IsFiniteFamily>(r);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::ew
