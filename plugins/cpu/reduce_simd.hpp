// Horizontal reductions of one contiguous span, written with GCC vector
// extensions: 32-byte vectors that the AVX2 clone keeps in ymm registers
// and the baseline clone splits into two SSE registers. Auto-vectorisation
// gives up on these loops (a NaN-aware max is not a MAX_EXPR; a float sum
// may not be reassociated), so the lane order is written out instead: four
// vector accumulators, combined by a fixed tree, then the tail in order.
// That order depends only on n, never on alignment or threads.
//
// Everything here is always_inline: it is compiled inside the
// target_clones functions of reduce_ops.hpp, once per instruction set.
#pragma once

#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#define LOOM_REDUCE_INLINE [[gnu::always_inline]] inline

namespace loom::cpu::reduce {

// 16-bit floats compute in float; everything else in itself.
template <class T>
using calc_t = std::conditional_t<plugin::is_half_v<T>, float, T>;
template <class T>
LOOM_REDUCE_INLINE calc_t<T> load(T v) {
  return static_cast<calc_t<T>>(v);
}

template <class C, int N>
struct VecOf {
  typedef C type __attribute__((vector_size(N * sizeof(C))));
};
template <class W>
inline constexpr int kLanes = 32 / static_cast<int>(sizeof(W));
template <class W>
using vec_t = typename VecOf<W, kLanes<W>>::type;

// x0..x3 = p[0, 4 * kLanes<W>) converted to W (out-parameters: returning
// a vector by value would change the ABI between the clones). 16-bit
// floats convert one by one.
template <class W, class T>
LOOM_REDUCE_INLINE void vload4(vec_t<W>& x0, vec_t<W>& x1, vec_t<W>& x2, vec_t<W>& x3,
                               const T* p) {
  constexpr int N = kLanes<W>;
  if constexpr (std::is_same_v<T, W>) {
    std::memcpy(&x0, p, sizeof x0);
    std::memcpy(&x1, p + N, sizeof x1);
    std::memcpy(&x2, p + 2 * N, sizeof x2);
    std::memcpy(&x3, p + 3 * N, sizeof x3);
  } else if constexpr (std::is_same_v<T, float> && std::is_same_v<W, double>) {
    // Lane by lane: GCC turns each group into one vcvtps2pd from memory
    // (__builtin_convertvector compiles to shuffles here).
    for (int l = 0; l < N; ++l) x0[l] = p[l];
    for (int l = 0; l < N; ++l) x1[l] = p[N + l];
    for (int l = 0; l < N; ++l) x2[l] = p[2 * N + l];
    for (int l = 0; l < N; ++l) x3[l] = p[3 * N + l];
  } else {
    W buf[4 * N];
    for (int l = 0; l < 4 * N; ++l) buf[l] = static_cast<W>(static_cast<calc_t<T>>(p[l]));
    std::memcpy(&x0, buf, sizeof x0);
    std::memcpy(&x1, buf + N, sizeof x1);
    std::memcpy(&x2, buf + 2 * N, sizeof x2);
    std::memcpy(&x3, buf + 3 * N, sizeof x3);
  }
}

// Folds the four accumulators and their lanes by a fixed tree; f(a, b)
// sets a = a ∘ b, for vectors and for scalars (in place: a lambda returning
// a vector would change the ABI between the clones).
template <class W, class V, class F>
LOOM_REDUCE_INLINE W vfold(V& a0, V& a1, V& a2, V& a3, F f) {
  constexpr int N = sizeof(V) / sizeof(W);
  f(a0, a1);
  f(a2, a3);
  f(a0, a2);
  W buf[N];
  std::memcpy(buf, &a0, sizeof buf);
  for (int w = N / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) f(buf[l], buf[l + w]);
  return buf[0];
}

// The fold of map(p[i]) over [0, n) in W (float or double), starting from
// `init` in every lane: f(a, x) combines in place (a += x or a *= x), and
// map(v) transforms in place, for vectors and scalars alike.
template <class W, class T, class F, class Map>
LOOM_REDUCE_INLINE W vspan(const T* p, int64_t n, W init, F f, Map map) {
  using V = vec_t<W>;
  constexpr int N = kLanes<W>;
  V a0 = V{} + init, a1 = a0, a2 = a0, a3 = a0, x0 = {}, x1 = {}, x2 = {}, x3 = {};
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    vload4<W>(x0, x1, x2, x3, p + i);
    map(x0), map(x1), map(x2), map(x3);
    f(a0, x0);
    f(a1, x1);
    f(a2, x2);
    f(a3, x3);
  }
  W s = vfold<W>(a0, a1, a2, a3, f);
  for (; i < n; ++i) {
    W x = static_cast<W>(static_cast<calc_t<T>>(p[i]));
    map(x);
    f(s, x);
  }
  return s;
}

// The max (IsMax) or min of `init` and p[0, n), C arithmetic (bool is read
// as uint8: max is "or", min "and"). NaN if any element is NaN: the
// select keeps the accumulator only when it compares strictly better, and
// a separate mask remembers NaNs (a NaN accumulator would be lost).
// Abs: of |x| (floats).
template <bool IsMax, bool Abs, class C>
LOOM_REDUCE_INLINE C vextreme(const C* p, int64_t n, C init) {
  constexpr int N = kLanes<C>;
  using V = vec_t<C>;
  V a0 = V{} + init, a1 = a0, a2 = a0, a3 = a0, x0 = {}, x1 = {}, x2 = {}, x3 = {};
  using I = decltype(a0 != a0);  // signed integer lanes of C's width
  I nan = {};
  auto pick = [](auto& a, const auto& x) {  // vectors or scalars
    if constexpr (IsMax) a = a > x ? a : x;
    else a = a < x ? a : x;
  };
  auto absv = [](V& x) {  // clear the sign bit
    if constexpr (Abs) {
      using E = std::conditional_t<sizeof(C) == 8, int64_t, int32_t>;
      x = (V)((I)x & (I{} + std::numeric_limits<E>::max()));  // vector casts reinterpret
    }
  };
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    std::memcpy(&x0, p + i, sizeof x0);
    std::memcpy(&x1, p + i + N, sizeof x1);
    std::memcpy(&x2, p + i + 2 * N, sizeof x2);
    std::memcpy(&x3, p + i + 3 * N, sizeof x3);
    absv(x0), absv(x1), absv(x2), absv(x3);
    pick(a0, x0);
    pick(a1, x1);
    pick(a2, x2);
    pick(a3, x3);
    if constexpr (std::is_floating_point_v<C>) nan |= (x0 != x0) | (x1 != x1) | (x2 != x2) | (x3 != x3);
  }
  C m = vfold<C>(a0, a1, a2, a3, pick);
  bool any_nan = init != init;
  for (int l = 0; l < N; ++l) any_nan |= nan[l] != 0;
  for (; i < n; ++i) {
    C x = p[i];
    if constexpr (Abs) x = std::fabs(x);
    any_nan |= x != x;
    pick(m, x);
  }
  if constexpr (std::is_floating_point_v<C>)
    if (any_nan) return std::numeric_limits<C>::quiet_NaN();
  return m;
}

}  // namespace loom::cpu::reduce
