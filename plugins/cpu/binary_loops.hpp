// The loop engine of the binary and ternary ops (binary.cpp,
// binary_compare.cpp): out[i] = op(in0[i], in1[i], ...) over one output and
// N same-shaped inputs whose element types may differ from each other and
// from the output (where's bool condition, the comparisons' bool result).
//
// Like loops.hpp, two paths: everything contiguous is one flat loop; other
// layouts go through plugin::StridedIter, and each inner run with a unit
// output stride whose inputs are all unit stride, or all unit stride but one
// broadcast (stride 0: "tensor op scalar"), still takes the flat loop, with
// the broadcast value loaded once before the loop. The flat loop is the only
// hot loop and carries the AVX2 clone. Operands are read through small
// accessors (Vec, Bcast, Step) so one variadic loop serves every op and
// arity. Aliasing: an output may be exactly one of its inputs (in-place ops);
// each element is read before it is written. No allocation anywhere.
#pragma once

#include "common.hpp"
#include "loops.hpp"

#include <loom/plugin/cast.hpp>
#include <loom/plugin/strided.hpp>

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace loom::cpu {

// An input operand with its element type: apply_elementwise<O>(out, op, In<T>{a}, ...).
template <class T>
struct In {
  const LoomTensorDesc& d;
};

namespace binary_detail {

template <class T>
struct Vec {
  const T* p;
  T operator[](int64_t i) const { return p[i]; }
};
template <class T>
struct Bcast {
  T v;
  T operator[](int64_t) const { return v; }
};
template <class T>
struct Step {
  const T* p;
  int64_t s;
  T operator[](int64_t i) const { return p[i * s]; }
};

template <class O, class Op, class... A>
LOOM_CPU_CLONES void flat_loop(O* o, int64_t n, Op op, A... a) {
  for (int64_t i = 0; i < n; ++i) o[i] = op(a[i]...);
}

template <class O, class Op, class... A>
void step_loop(O* o, int64_t so, int64_t n, Op op, A... a) {
  for (int64_t i = 0; i < n; ++i) o[i * so] = op(a[i]...);
}

template <bool Broadcast, class T>
auto access(const T* p) {
  if constexpr (Broadcast) return Bcast<T>{*p};
  else return Vec<T>{p};
}

// flat_loop with input B broadcast and the others unit stride.
template <size_t B, class O, class Op, class Ptrs, size_t... K>
void flat_bcast(O* o, int64_t n, Op op, const Ptrs& p, std::index_sequence<K...>) {
  flat_loop(o, n, op, access<K == B>(std::get<K>(p))...);
}

// One inner run: `p` holds the inputs' pointers at the run's start, `is`
// their inner strides.
template <class O, class Op, class Ptrs, size_t... K>
void run(O* o, int64_t so, int64_t n, Op op, const Ptrs& p, const int64_t* is,
         std::index_sequence<K...> seq) {
  if (so == 1) {
    if (((is[K] == 1) && ...)) return flat_loop(o, n, op, Vec{std::get<K>(p)}...);
    const int zeros = ((is[K] == 0) + ...), ones = ((is[K] == 1) + ...);
    if (zeros == 1 && ones == static_cast<int>(sizeof...(K)) - 1) {
      (void)((is[K] == 0 && (flat_bcast<K>(o, n, op, p, seq), true)) || ...);
      return;
    }
  }
  step_loop(o, so, n, op, Step{std::get<K>(p), is[K]}...);
}

template <class Pred, class... A>
bool scan_loop(int64_t n, Pred pred, A... a) {
  bool hit = false;  // no early exit: keeps the loop branch-free
  for (int64_t i = 0; i < n; ++i) hit |= pred(a[i]...);
  return hit;
}

template <class O, class Op, class... T, size_t... K>
void apply_impl(const LoomTensorDesc& out, Op op, std::index_sequence<K...> seq, In<T>... in) {
  constexpr int N = static_cast<int>(sizeof...(T));
  O* po = plugin::data_ptr<O>(out);
  const std::tuple<const T*...> base{plugin::data_ptr<const T>(in.d)...};
  if (all_contiguous(out, in.d...)) {
    parallel_for(plugin::numel(out), kParallelGrain, [&](int64_t s, int64_t e) {
      flat_loop(po + s, e - s, op, Vec{std::get<K>(base) + s}...);
    });
    return;
  }
  const int64_t* strides[N + 1] = {out.strides, in.d.strides...};
  plugin::StridedIter<N + 1> it;
  const int64_t n = it.init(out.ndim, out.shape, strides);
  const int64_t so = it.inner_stride(0);
  const int64_t is[N] = {it.inner_stride(static_cast<int>(K) + 1)...};
  parallel_for(n, kParallelGrain, [&](int64_t s, int64_t e) {
    it.for_each_run(s, e, [&](const int64_t* off, int64_t len) {
      const std::tuple<const T*...> p{(std::get<K>(base) + off[K + 1])...};
      run(po + off[0], so, len, op, p, is, seq);
    });
  });
}

template <class Pred, class... T, size_t... K>
bool any_element_impl(Pred pred, std::index_sequence<K...>, In<T>... in) {
  constexpr int N = static_cast<int>(sizeof...(T));
  const LoomTensorDesc& ref = std::get<0>(std::tie(in.d...));
  const std::tuple<const T*...> base{plugin::data_ptr<const T>(in.d)...};
  const int64_t* strides[N] = {in.d.strides...};
  plugin::StridedIter<N> it;
  const int64_t n = it.init(ref.ndim, ref.shape, strides);
  const int64_t is[N] = {it.inner_stride(static_cast<int>(K))...};
  const bool unit = ((is[K] == 1) && ...);
  std::atomic<bool> hit{false};
  parallel_for(n, kParallelGrain, [&](int64_t s, int64_t e) {
    bool mine = false;
    it.for_each_run(s, e, [&](const int64_t* off, int64_t len) {
      if (mine) return;
      mine = unit ? scan_loop(len, pred, Vec{std::get<K>(base) + off[K]}...)
                  : scan_loop(len, pred, Step{std::get<K>(base) + off[K], is[K]}...);
    });
    if (mine) hit.store(true, std::memory_order_relaxed);
  });
  return hit.load(std::memory_order_relaxed);
}

}  // namespace binary_detail

// out = op(in...) elementwise. Every input has out's shape (broadcast dims
// have stride 0); O and each T are storage types; `op` must not throw.
template <class O, class Op, class... T>
void apply_elementwise(const LoomTensorDesc& out, Op op, In<T>... in) {
  binary_detail::apply_impl<O>(out, op, std::index_sequence_for<T...>{}, in...);
}

// True when pred(in...) holds for some element. Kernels whose integer
// inputs can be invalid (division by zero, negative powers) scan first, so
// a failing call writes nothing and an in-place self stays as it was.
template <class Pred, class... T>
bool any_element(Pred pred, In<T>... in) {
  return binary_detail::any_element_impl(pred, std::index_sequence_for<T...>{}, in...);
}

}  // namespace loom::cpu
