// The combine functors of the CUDA reductions, __host__ __device__ so the
// host test checks them (tests/reduce_ops_test.cu). Semantics are the CPU
// plugin's (plugins/cpu/reduce_ops.hpp, reduce_stats.cpp;
// docs/kernel_conventions.md "Reductions"). An op is
//   using In;  using Acc;  static constexpr bool kHasIdentity;
//   Acc  init() const;                       // the identity
//   void add(Acc&, In x, int64_t i) const;   // one element, i its reduced index
//   void combine(Acc& a, const Acc& b) const;  // merge a partial; order-free
//                                            // up to rounding (index ops break
//                                            // ties on the index)
//   void store(const Acc&, int64_t count, int64_t o0, int64_t o1) const;
// with o0/o1 element offsets into the op's output pointer(s) and count the
// slice's element count. Acc is trivially copyable (warp shuffles move it
// as 32-bit words).
//
// Accumulation: sums of 16-bit floats and float32 in float (lanes and a
// tree keep the error small), float64 in double, integers and bool in
// wrapping uint64; prod, var/std, norm in double (the CPU plugin's choice
// for float32, kept so both devices agree); logsumexp in float (double for
// float64). NaN propagates everywhere; the extremes take the first NaN.
#pragma once

#include "dtype.cuh"
#include "vendor/gpu_target.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::reduce {

template <class T>
using sum_acc_t = std::conditional_t<is_floating_v<T>, std::conditional_t<std::is_same_v<T, double>, double, float>,
                                     uint64_t>;
template <class T>
using prod_acc_t = std::conditional_t<is_floating_v<T>, double, uint64_t>;

// A double (or float) result as dtype T: floats round once, integers wrap
// through uint64 (their accumulators are wrapping uint64), bool is x != 0.
template <class T, class A>
__host__ __device__ inline T from_acc(A a) {
  if constexpr (std::is_same_v<T, __half>) return __double2half(static_cast<double>(a));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __double2bfloat16(static_cast<double>(a));
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(a);
  else if constexpr (std::is_same_v<T, bool>) return a != 0;
  else return static_cast<T>(static_cast<uint64_t>(a));
}

template <class T>
__host__ __device__ inline bool is_nan(T x) {
  return x != x;  // false for integers and bool
}

// ------------------------------------------------------------ Σ and Π ---

// sum (Mean = false) and mean (true; 0 elements give 0/0 = NaN as PyTorch).
template <class T, bool Mean>
struct SumOp {
  using In = T;
  using Acc = sum_acc_t<T>;
  static constexpr bool kHasIdentity = true;
  T* out;

  __host__ __device__ Acc init() const { return Acc(0); }
  __host__ __device__ void add(Acc& a, T x, int64_t) const {
    if constexpr (is_floating_v<T>) a += widen(x);
    else a += static_cast<uint64_t>(x);  // sign-extends, then wraps like int64
  }
  __host__ __device__ void combine(Acc& a, const Acc& b) const { a += b; }
  __host__ __device__ void store(const Acc& a, int64_t n, int64_t o0, int64_t) const {
    if constexpr (Mean) out[o0] = from_acc<T>(static_cast<double>(a) / static_cast<double>(n));
    else out[o0] = from_acc<T>(a);
  }
};

// Products: double for floats (float32 intermediates cannot overflow where
// the result would not), wrapping uint64 for integers, "all" for bool.
template <class T>
struct ProdOp {
  using In = T;
  using Acc = prod_acc_t<T>;
  static constexpr bool kHasIdentity = true;
  T* out;

  __host__ __device__ Acc init() const { return Acc(1); }
  __host__ __device__ void add(Acc& a, T x, int64_t) const {
    if constexpr (is_floating_v<T>) a *= static_cast<double>(widen(x));
    else a *= static_cast<uint64_t>(x);
  }
  __host__ __device__ void combine(Acc& a, const Acc& b) const { a *= b; }
  __host__ __device__ void store(const Acc& a, int64_t, int64_t o0, int64_t) const { out[o0] = from_acc<T>(a); }
};

// ----------------------------------------------------------- extremes ---

// x replaces the extreme a: strictly beyond it, or the first NaN.
template <bool IsMax, class C>
__host__ __device__ inline bool beyond(C x, C a) {
  return (IsMax ? a < x : x < a) || (is_nan(x) && !is_nan(a));
}

// amax / amin in the compute type (bool: or / and). A NaN, once in, stays.
template <class T, bool IsMax>
struct ExtremeOp {
  using In = T;
  using Acc = opmath_t<T>;
  static constexpr bool kHasIdentity = false;
  T* out;

  __host__ __device__ Acc init() const {
    using L = std::numeric_limits<Acc>;
    if constexpr (std::is_same_v<Acc, bool>) return !IsMax;
    else if constexpr (L::has_infinity) return IsMax ? -L::infinity() : L::infinity();
    else return IsMax ? L::lowest() : L::max();
  }
  __host__ __device__ void add(Acc& a, T x, int64_t) const { combine(a, widen(x)); }
  __host__ __device__ void combine(Acc& a, const Acc& b) const {
    if (beyond<IsMax>(b, a)) a = b;
  }
  __host__ __device__ void store(const Acc& a, int64_t, int64_t o0, int64_t) const { out[o0] = narrow<T>(a); }
};

// argmax/argmin (values == nullptr: output 0 is the indices) and
// max.dim/min.dim (values at o0, indices at o1). The first extreme wins,
// NaN beating numbers and the first NaN winning among NaNs.
template <class T, bool IsMax>
struct ArgOp {
  using In = T;
  using C = std::conditional_t<std::is_same_v<T, bool>, int32_t, opmath_t<T>>;
  struct Acc {
    C v;
    int64_t i;  // -1: nothing seen yet
  };
  static constexpr bool kHasIdentity = false;
  T* values;
  int64_t* indices;

  __host__ __device__ Acc init() const { return {C(0), -1}; }
  __host__ __device__ void add(Acc& a, T x, int64_t i) const {
    const C v = static_cast<C>(widen(x));
    if (a.i < 0 || beyond<IsMax>(v, a.v)) a = {v, i};  // indices arrive in order per lane
  }
  __host__ __device__ void combine(Acc& a, const Acc& b) const {
    if (b.i < 0) return;
    const bool tie = b.v == a.v || (is_nan(b.v) && is_nan(a.v));
    if (a.i < 0 || beyond<IsMax>(b.v, a.v) || (tie && b.i < a.i)) a = b;
  }
  __host__ __device__ void store(const Acc& a, int64_t, int64_t o0, int64_t o1) const {
    if (values) {
      values[o0] = narrow<T>(static_cast<opmath_t<T>>(a.v));
      indices[o1] = a.i;
    } else {
      indices[o0] = a.i;
    }
  }
};

// --------------------------------------------------------- all / any ---

// all/any over the input's raw bits: `Word` is an unsigned type of the
// dtype's width and `mask` the bits that make it non-zero (floats drop the
// sign bit, so -0 is zero and NaN is true). One instantiation per width.
template <class Word, bool IsAll>
struct LogicalOp {
  using In = Word;
  using Acc = uint32_t;
  static constexpr bool kHasIdentity = true;
  Word mask;
  bool* out;

  __host__ __device__ Acc init() const { return IsAll ? 1u : 0u; }
  __host__ __device__ void add(Acc& a, Word x, int64_t) const {
    const Acc nz = (x & mask) != 0;
    a = IsAll ? (a & nz) : (a | nz);
  }
  __host__ __device__ void combine(Acc& a, const Acc& b) const { a = IsAll ? (a & b) : (a | b); }
  __host__ __device__ void store(const Acc& a, int64_t, int64_t o0, int64_t) const { out[o0] = a != 0; }
};

// ------------------------------------------------------------- scans ---

// cumsum (IsProd = false) and cumprod: accumulated like the CPU plugin's
// scans, floats in double (a long float32 cumsum does not drift), integers
// in wrapping uint64, bool as "any so far" / "all so far".
template <class T, bool IsProd>
struct ScanOp {
  using Acc = std::conditional_t<is_floating_v<T>, double, uint64_t>;
  __host__ __device__ Acc init() const { return Acc(IsProd ? 1 : 0); }
  __host__ __device__ Acc value(T x) const {
    if constexpr (is_floating_v<T>) return static_cast<double>(widen(x));
    else return static_cast<uint64_t>(x);
  }
  // earlier (+|*) later; both are commutative, the order is for rounding.
  __host__ __device__ Acc combine(const Acc& earlier, const Acc& later) const {
    return IsProd ? earlier * later : earlier + later;
  }
  __host__ __device__ T result(const Acc& a) const { return from_acc<T>(a); }
};

}  // namespace loom::LOOM_GPU_NAMESPACE::reduce
