// The index math of the CUDA indexing and shape kernels (indexing.cu,
// indexing_masked.cu, shape.cu, pad_embedding.cu) as __host__ __device__
// functions, so tests/indexing_ops_test.cu checks them on the host against
// the CPU plugin's rules (docs/kernel_conventions.md, "Indexing", "Shape",
// "Loss, dropout, embedding, pad").
#pragma once

#include "dtype.cuh"
#include "vendor/gpu_target.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::indexing {

// 0 <= i < size in one compare (a negative index is out of range: the core
// has already wrapped the indices it may wrap).
__host__ __device__ inline bool in_bounds(int64_t i, int64_t size) {
  return static_cast<uint64_t>(i) < static_cast<uint64_t>(size);
}

// The type scatter_add_/index_add_ add in, as the CPU plugin: 16-bit floats
// in float, integers in an unsigned type of at least 32 bits (sums wrap
// modulo 2^bits, two's complement), bool in bool (an add is an or).
template <class T> struct AddTypeOf { using type = opmath_t<T>; };
template <> struct AddTypeOf<uint8_t> { using type = uint32_t; };
template <> struct AddTypeOf<int8_t> { using type = uint32_t; };
template <> struct AddTypeOf<int16_t> { using type = uint32_t; };
template <> struct AddTypeOf<int32_t> { using type = uint32_t; };
template <> struct AddTypeOf<int64_t> { using type = uint64_t; };
template <class T> using add_t = typename AddTypeOf<T>::type;

// dst + alpha * v for scatter_add_ (alpha 1) and index_add_, as the CPU
// plugin computes it: the scaled source rounded to the add type, then the
// sum rounded once to T. `scaled` is false when alpha is 1: the product is
// skipped, as on the CPU.
template <class T>
struct ScatterAdd {
  using A = add_t<T>;
  A alpha;
  bool scaled;
  __host__ __device__ T operator()(T dst, T v) const {
    if constexpr (std::is_same_v<T, bool>) {
      const bool x = scaled ? (v && alpha) : v;
      return dst || x;
    } else {
      A x = static_cast<A>(widen(v));
      if (scaled) x = static_cast<A>(x * alpha);
      return narrow<T>(static_cast<opmath_t<T>>(static_cast<A>(static_cast<A>(widen(dst)) + x)));
    }
  }
};

// ---- flip / roll ----------------------------------------------------------------------

// Input index along one dim of size n for output index o: flipped, or rolled
// by shift s in [0, n) (out[o] = in[(o - s) mod n]).
__host__ __device__ inline int64_t flip_source(int64_t o, int64_t n) { return n - 1 - o; }
__host__ __device__ inline int64_t roll_source(int64_t o, int64_t shift, int64_t n) {
  return o >= shift ? o - shift : o - shift + n;
}

// ---- tril / triu ----------------------------------------------------------------------

// Whether element (i, j) of a matrix survives tril (j <= i + k) or triu
// (j >= i + k).
__host__ __device__ inline bool triangle_keeps(bool lower, int64_t i, int64_t j, int64_t k) {
  return lower ? j <= i + k : j >= i + k;
}

// ---- pad ------------------------------------------------------------------------------

enum class PadMode : int32_t { Constant, Reflect, Replicate };

// Input index for output index o along a dim of input size n padded by
// `before`; -1 means "the fill value" (constant mode only). The core
// guarantees reflect pads are < n and reflect/replicate dims non-empty.
__host__ __device__ inline int64_t pad_source(PadMode m, int64_t o, int64_t before, int64_t n) {
  const int64_t i = o - before;
  if (i >= 0 && i < n) return i;
  switch (m) {
    case PadMode::Constant: return -1;
    case PadMode::Reflect: return i < 0 ? -i : 2 * (n - 1) - i;
    case PadMode::Replicate: return i < 0 ? 0 : n - 1;
  }
  return -1;
}

// ---- nonzero / masked_select ----------------------------------------------------------

// Whether x counts as nonzero: NaN does, -0 does not; 16-bit floats compare
// as float.
template <class T>
__host__ __device__ inline bool is_nonzero(T x) {
  if constexpr (std::is_same_v<T, bool>) return x;
  else if constexpr (is_half_v<T>) return widen(x) != 0.0f;
  else return x != T(0);
}

// Row-major coordinates of linear index i in `shape` (ndim dims), written to
// coord[0..ndim).
__host__ __device__ inline void unravel(int64_t i, int32_t ndim, const int64_t* shape, int64_t* coord) {
  for (int32_t d = ndim - 1; d >= 0; --d) {
    const int64_t q = i / shape[d];
    coord[d] = i - q * shape[d];
    i = q;
  }
}

// ---- sort / topk ----------------------------------------------------------------------

// Radix-sort keys: an unsigned integer whose order is the sort order of
// docs/kernel_conventions.md ("sort"): numbers ascending, every NaN equal
// and above every number, -0 equal to +0 (both would keep index order in a
// stable sort). Integers flip their sign bit; floats (16-bit ones widened to
// float, which is exact and monotonic) map negative bit patterns to their
// complement and set the sign bit of the others. The key's significant bits
// are the low sort_key_bits<T>.
template <class T>
inline constexpr int sort_key_bits = is_half_v<T> ? 32 : static_cast<int>(sizeof(T) * 8);

template <class T>
__host__ __device__ inline uint64_t sort_key(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return x ? 1u : 0u;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    constexpr U sign = std::is_signed_v<T> ? static_cast<U>(U(1) << (sizeof(T) * 8 - 1)) : U(0);
    return static_cast<U>(static_cast<U>(x) ^ sign);
  } else {
    using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
    using U = std::conditional_t<std::is_same_v<T, double>, uint64_t, uint32_t>;
    const F f = static_cast<F>(widen(x));
    if (f != f) return static_cast<U>(~U(0));  // every NaN: the largest key
    const F canonical = f == F(0) ? F(0) : f;  // -0 sorts as +0
    U bits;
    memcpy(&bits, &canonical, sizeof bits);
    constexpr U sign = U(1) << (sizeof(U) * 8 - 1);
    return (bits & sign) ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
  }
}

}  // namespace loom::LOOM_GPU_NAMESPACE::indexing
