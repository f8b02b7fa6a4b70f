// Op functors for reduce::run (the interface is at the top of
// reduce_driver.hpp): Σ-like folds (sum, mean, the 0/1/2/p norms), prod,
// min/max values, arg-min/max with indices, and all/any.
//
// Accumulation: floating inputs fold in double. sum, mean and Σ|x| of
// 16/32-bit floats take 32 float lanes per kBlock (vectorises; the rounding
// error of a block is bounded by its 1024 / 32 = 32 adds per lane) whose
// totals go into double; other maps and float64 take double lanes. Integers
// and bool fold in uint64, which wraps like int64 and is never undefined.
// Lanes and partials are combined in a fixed order (reduce_simd.hpp).
#pragma once

#include "reduce_driver.hpp"
#include "reduce_simd.hpp"
#include "unary_math.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

namespace loom::cpu::reduce {

inline constexpr int64_t kBlock = 1024;  // divides kChunk

// ---------------------------------------------------------------- maps ---
// What a Σ-like op adds up. W: float, double or wrapping uint64_t (which
// decides the accumulation). A map with `vec(v)` (in place, on vectors and
// scalars of W) is applied inside vspan; the others map a block into a
// buffer first (a plain loop, which auto-vectorises) that is then summed.

struct SumMap {  // sum, mean
  template <class T>
  using W = std::conditional_t<plugin::is_floating_v<T>, calc_t<T>, uint64_t>;
  template <class T>
  W<T> operator()(T x) const { return static_cast<W<T>>(load(x)); }  // modular; bool -> 0/1
  void vec(auto&) const {}
};
struct AbsMap {  // norm 1: float lanes like sum (no cancellation, no overflow)
  template <class T>
  using W = calc_t<T>;
  template <class T>
  W<T> operator()(T x) const { return std::fabs(load(x)); }
  void vec(auto& v) const { v = v < 0 ? -v : v; }  // -0 stays, harmless in a sum
};
struct SquareMap {  // norm 2: double, so float32 squares cannot overflow
  template <class T>
  using W = double;
  template <class T>
  double operator()(T x) const {
    const double d = load(x);
    return d * d;
  }
  void vec(auto& v) const { v = v * v; }
};
struct NonzeroMap {  // norm 0; NaN counts as non-zero, as in PyTorch
  template <class T>
  using W = double;
  template <class T>
  double operator()(T x) const { return load(x) != 0 ? 1.0 : 0.0; }
  void vec(auto& v) const { v = v != 0 ? decltype(v + 0){} + 1 : decltype(v + 0){}; }
};
struct PowMap {  // other norms: |x|^p; narrower floats via the vector exp/log
  double p;
  template <class T>
  using W = double;
  template <class T>
  double operator()(T x) const {
    const double a = std::fabs(static_cast<double>(load(x)));
    if constexpr (std::is_same_v<T, double>) return std::pow(a, p);
    else return vmath::exp_d(p * vmath::log_d(a));
  }
};

template <class T, class Map>
using map_t = typename Map::template W<T>;
template <class W>
using sum_acc_t = std::conditional_t<std::is_same_v<W, uint64_t>, uint64_t, double>;

// Σ map(p[i]) over n contiguous elements: per kBlock, a vector sum in W,
// then the block totals in double.
template <class T, class Map>
[[gnu::flatten]] LOOM_CPU_CLONES sum_acc_t<map_t<T, Map>> sum_span(const T* p, int64_t n, Map map) {
  using W = map_t<T, Map>;
  if constexpr (std::is_same_v<W, uint64_t>) {
    uint64_t s = 0;
    for (int64_t i = 0; i < n; ++i) s += map(p[i]);
    return s;
  } else {
    auto add = [](auto& a, const auto& b) { a += b; };
    double total = 0;
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t len = std::min(n - b, kBlock);
      if constexpr (requires(W w) { map.vec(w); }) {
        total += vspan<W>(p + b, len, W(0), add, [&](auto& v) { map.vec(v); });
      } else {
        W buf[kBlock];
        for (int64_t i = 0; i < len; ++i) buf[i] = map(p[b + i]);
        total += vspan<W>(buf, len, W(0), add, [](auto&) {});
      }
    }
    return total;
  }
}

// Π p[i]: double for floats, wrapping uint64 for integers and bool.
template <class T>
using prod_acc_t = std::conditional_t<plugin::is_floating_v<T>, double, uint64_t>;
template <class T>
[[gnu::flatten]] LOOM_CPU_CLONES prod_acc_t<T> prod_span(const T* p, int64_t n) {
  if constexpr (plugin::is_floating_v<T>) {
    return vspan<double>(p, n, 1.0, [](auto& a, const auto& b) { a *= b; }, [](auto&) {});
  } else {
    uint64_t s = 1;
    for (int64_t i = 0; i < n; ++i) s *= static_cast<uint64_t>(p[i]);
    return s;
  }
}

// The extreme of `init` and p[0, n) in calc type (vextreme; bool as uint8,
// 16-bit floats through a float buffer). NaN if any is NaN.
template <bool IsMax, bool Abs, class T>
[[gnu::flatten]] LOOM_CPU_CLONES calc_t<T> extreme_span(const T* p, int64_t n, calc_t<T> init) {
  if constexpr (std::is_same_v<T, bool>) {
    const uint8_t* q = reinterpret_cast<const uint8_t*>(p);  // bool is stored as 0/1
    return vextreme<IsMax, false>(q, n, static_cast<uint8_t>(init)) != 0;
  } else if constexpr (plugin::is_half_v<T>) {
    float m = init, buf[kBlock];
    for (int64_t b = 0; b < n && m == m; b += kBlock) {
      const int64_t len = std::min(n - b, kBlock);
      for (int64_t i = 0; i < len; ++i) buf[i] = load(p[b + i]);
      m = vextreme<IsMax, Abs>(buf, len, m);
    }
    return m;
  } else {
    return vextreme<IsMax, Abs>(p, n, init);
  }
}

// The accumulator back to dtype T: floats round once (plugin::cast), bool is
// "any", integers wrap.
template <class T, class A>
inline T from_acc(A a) {
  if constexpr (plugin::is_floating_v<T>) return plugin::cast<T>(static_cast<double>(a));
  else if constexpr (std::is_same_v<T, bool>) return a != 0;
  else return static_cast<T>(a);
}

// Finishes: what the output gets from (Σ, count).
struct SumFin {
  template <class T, class A>
  T get(A a, int64_t) const { return from_acc<T>(a); }
};
struct MeanFin {  // 0/0 = NaN for an empty mean, as PyTorch
  template <class T>
  T get(double a, int64_t n) const { return plugin::cast<T>(a / static_cast<double>(n)); }
};
struct SqrtFin {
  template <class T>
  T get(double a, int64_t) const { return plugin::cast<T>(std::sqrt(a)); }
};
struct RootFin {
  double p;
  template <class T>
  T get(double a, int64_t) const { return plugin::cast<T>(std::pow(a, 1.0 / p)); }
};

// ------------------------------------------------------------------ ops ---

template <class T, class Map, class Fin>
struct SumOp {
  using In = T;
  using Acc = sum_acc_t<map_t<T, Map>>;
  static constexpr bool kHasIdentity = true;
  Map map;
  Fin fin;
  T* out;

  Acc init() const { return 0; }
  void add(Acc& a, T x, int64_t) const { a += map(x); }
  void run(Acc& a, const T* p, int64_t n, int64_t) const { a += sum_span(p, n, map); }
  void add_row(Acc* a, const T* row, int64_t nc, int64_t s, int64_t) const {
    const Map m = map;
    fold_columns(a, row, nc, s, [m](Acc& x, T v) { x += m(v); });
  }
  void add_rows4(Acc* a, const T* const* r, int64_t nc, int64_t s, int64_t) const {
    const Map m = map;
    fold_columns4(a, r, nc, s, [m](Acc& x, T v0, T v1, T v2, T v3) {
      x += (Acc(m(v0)) + Acc(m(v1))) + (Acc(m(v2)) + Acc(m(v3)));
    });
  }
  void combine(Acc& a, const Acc& b) const { a += b; }
  void store(const Acc& a, int64_t n, int64_t o0, int64_t) const {
    out[o0] = fin.template get<T>(a, n);
  }
};

// Products in double (floats; float32 intermediates cannot overflow where
// the result would not) or wrapping uint64 (integers; bool gives "all").
template <class T>
struct ProdOp {
  using In = T;
  using Acc = prod_acc_t<T>;
  static constexpr bool kHasIdentity = true;
  T* out;

  static Acc val(T x) {
    if constexpr (plugin::is_floating_v<T>) return load(x);
    else return static_cast<uint64_t>(x);
  }
  Acc init() const { return 1; }
  void add(Acc& a, T x, int64_t) const { a *= val(x); }
  void run(Acc& a, const T* p, int64_t n, int64_t) const { a *= prod_span(p, n); }
  void add_row(Acc* a, const T* row, int64_t nc, int64_t s, int64_t) const {
    fold_columns(a, row, nc, s, [](Acc& x, T v) { x *= val(v); });
  }
  void add_rows4(Acc* a, const T* const* r, int64_t nc, int64_t s, int64_t) const {
    fold_columns4(a, r, nc, s, [](Acc& x, T v0, T v1, T v2, T v3) {
      x *= (val(v0) * val(v1)) * (val(v2) * val(v3));
    });
  }
  void combine(Acc& a, const Acc& b) const { a *= b; }
  void store(const Acc& a, int64_t, int64_t o0, int64_t) const { out[o0] = from_acc<T>(a); }
};

// True when x should replace the current extreme a: strictly larger (IsMax)
// or smaller, or the first NaN. Strictness keeps the first occurrence.
template <bool IsMax, class C>
inline bool better(C x, C a) {
  const bool cmp = IsMax ? x > a : x < a;
  if constexpr (std::is_floating_point_v<C>) return cmp || (x != x && a == a);
  else return cmp;
}

// amax/amin, and the ±inf norms (Abs: of |x|, identity 0 or +inf).
template <class T, bool IsMax, bool Abs = false>
struct ExtremeOp {
  using In = T;
  using Acc = calc_t<T>;
  static constexpr bool kHasIdentity = Abs;
  T* out;

  static Acc v(T x) {
    if constexpr (Abs) return static_cast<Acc>(std::fabs(load(x)));
    else return load(x);
  }
  Acc init() const {
    using L = std::numeric_limits<Acc>;
    if constexpr (Abs) return IsMax ? Acc(0) : L::infinity();
    else if constexpr (L::has_infinity) return IsMax ? -L::infinity() : L::infinity();
    else return IsMax ? L::lowest() : L::max();
  }
  void add(Acc& a, T x, int64_t) const {
    const Acc y = v(x);
    a = ((IsMax ? y > a : y < a) | (y != y)) ? y : a;  // "|": no branch; any NaN sticks
  }
  void run(Acc& a, const T* p, int64_t n, int64_t) const { a = extreme_span<IsMax, Abs>(p, n, a); }
  void add_row(Acc* a, const T* row, int64_t nc, int64_t s, int64_t) const {
    fold_columns(a, row, nc, s, [](Acc& m, T x) {
      const Acc y = v(x);
      m = ((IsMax ? y > m : y < m) | (y != y)) ? y : m;  // branch-free, so it vectorises
    });
  }
  void add_rows4(Acc* a, const T* const* r, int64_t nc, int64_t s, int64_t) const {
    fold_columns4(a, r, nc, s, [](Acc& m, T x0, T x1, T x2, T x3) {
      const Acc y0 = v(x0), y1 = v(x1), y2 = v(x2), y3 = v(x3);
      m = ((IsMax ? y0 > m : y0 < m) | (y0 != y0)) ? y0 : m;
      m = ((IsMax ? y1 > m : y1 < m) | (y1 != y1)) ? y1 : m;
      m = ((IsMax ? y2 > m : y2 < m) | (y2 != y2)) ? y2 : m;
      m = ((IsMax ? y3 > m : y3 < m) | (y3 != y3)) ? y3 : m;
    });
  }
  void combine(Acc& a, const Acc& b) const {
    if (better<IsMax>(b, a)) a = b;
  }
  void store(const Acc& a, int64_t, int64_t o0, int64_t) const { out[o0] = static_cast<T>(a); }
};

// argmax/argmin (Values = false: outputs {indices}) and max.dim/min.dim
// (Values = true: outputs {values, indices}). First occurrence, first NaN.
template <class T, bool IsMax, bool Values>
struct ArgOp {
  using In = T;
  using C = calc_t<T>;
  struct Acc {
    C v;
    int64_t i;  // -1: nothing seen yet
  };
  static constexpr bool kHasIdentity = false;
  static constexpr int64_t kArgBlock = 1024;
  T* values;
  int64_t* indices;

  Acc init() const { return {C{}, -1}; }
  void add(Acc& a, T x, int64_t i) const {
    if (a.i < 0 || better<IsMax>(load(x), a.v)) a = {load(x), i};
  }
  // Per block: the extreme with vector code; only when it beats the best so
  // far, a scan for its first occurrence.
  void run(Acc& a, const T* p, int64_t n, int64_t idx) const {
    for (int64_t b = 0; b < n; b += kArgBlock) {
      const int64_t len = std::min(kArgBlock, n - b);
      const C m = extreme_span<IsMax, false>(p + b, len, load(p[b]));
      if (a.i >= 0 && !better<IsMax>(m, a.v)) continue;
      int64_t j = 0;
      if (m != m) {
        while (load(p[b + j]) == load(p[b + j])) ++j;
      } else {
        while (!(load(p[b + j]) == m)) ++j;
      }
      a = {load(p[b + j]), idx + b + j};
    }
  }
  void add_row(Acc* a, const T* row, int64_t nc, int64_t s, int64_t r) const {
    for (int64_t j = 0; j < nc; ++j) add(a[j], row[j * s], r);
  }
  void add_rows4(Acc* a, const T* const* r, int64_t nc, int64_t s, int64_t i) const {
    for (int64_t j = 0; j < nc; ++j)
      for (int k = 0; k < 4; ++k) add(a[j], r[k][j * s], i + k);  // in row order: ties keep the first
  }
  void combine(Acc& a, const Acc& b) const {
    if (b.i >= 0 && (a.i < 0 || better<IsMax>(b.v, a.v))) a = b;
  }
  void store(const Acc& a, int64_t, int64_t o0, int64_t o1) const {
    if constexpr (Values) {
      values[o0] = static_cast<T>(a.v);
      indices[o1] = a.i;
    } else {
      indices[o0] = a.i;
    }
  }
};

// 1 when every (IsAll) or some element of p[0, n) is non-zero.
template <bool IsAll, class T, class Nz>
[[gnu::flatten]] LOOM_CPU_CLONES unsigned logical_block(const T* p, int64_t n, Nz nz) {
  unsigned r = IsAll ? 1u : 0u;
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (IsAll) r &= nz(p[i]);
    else r |= nz(p[i]);
  }
  return r;
}

// all / any over the input's own dtype (x != 0; NaN is true), output bool.
template <class T, bool IsAll>
struct LogicalOp {
  using In = T;
  using Acc = unsigned;
  static constexpr bool kHasIdentity = true;
  static constexpr int64_t kDecideBlock = 4096;  // elements between early-exit checks
  bool* out;

  // 16-bit floats: test the bits, without converting (±0 is the only zero).
  static unsigned nz(T x) {
    if constexpr (plugin::is_half_v<T>) return (x.bits & 0x7fffu) != 0;
    else return x != T(0);
  }
  Acc init() const { return IsAll ? 1u : 0u; }
  void add(Acc& a, T x, int64_t) const { a = IsAll ? (a & nz(x)) : (a | nz(x)); }
  void run(Acc& a, const T* p, int64_t n, int64_t) const {
    for (int64_t b = 0; b < n && a == (IsAll ? 1u : 0u); b += kDecideBlock)
      a = logical_block<IsAll>(p + b, std::min(kDecideBlock, n - b), [](T x) { return nz(x); });
  }
  void add_row(Acc* a, const T* row, int64_t nc, int64_t s, int64_t) const {
    fold_columns(a, row, nc, s, [](Acc& x, T v) { x = IsAll ? (x & nz(v)) : (x | nz(v)); });
  }
  void add_rows4(Acc* a, const T* const* r, int64_t nc, int64_t s, int64_t) const {
    fold_columns4(a, r, nc, s, [](Acc& x, T v0, T v1, T v2, T v3) {
      const unsigned y = IsAll ? (nz(v0) & nz(v1) & nz(v2) & nz(v3)) : (nz(v0) | nz(v1) | nz(v2) | nz(v3));
      x = IsAll ? (x & y) : (x | y);
    });
  }
  void combine(Acc& a, const Acc& b) const { a = IsAll ? (a & b) : (a | b); }
  void store(const Acc& a, int64_t, int64_t o0, int64_t) const { out[o0] = a != 0; }
};

}  // namespace loom::cpu::reduce
