// The elementwise loop engine: applies a per-element functor to one output
// and one or two inputs of the same shape and dtype.
//
// Two paths. When every operand is contiguous the whole tensor is one flat
// loop (a few branches before the first element, no allocation), split
// across OpenMP threads only past kParallelGrain. Otherwise the operands go
// through plugin::StridedIter, which merges what it can and hands out inner
// runs; a run whose operands have unit or zero inner stride still takes a
// flat loop (the common "tensor op broadcast scalar" case), anything else
// a plain strided one.
//
// The flat loops are compiled twice (AVX2 and baseline x86-64) and picked at
// load time, so the plugin runs on any x86-64 and vectorises wide where it
// can. Aliasing: an output may be exactly one of its inputs (in-place ops);
// each element is read before it is written, so that is safe.
#pragma once

#include "common.hpp"

#include <loom/plugin/strided.hpp>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LOOM_CPU_CLONES __attribute__((target_clones("avx2", "default")))
// The loops of the float math functions (unary_math.hpp), which compute in
// double and are bound by arithmetic, not memory: an AVX-512 clone runs
// twice the lanes. No FMA is contracted (-ffp-contract=off), so every clone
// gives the same bits.
#define LOOM_CPU_MATH_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define LOOM_CPU_CLONES
#define LOOM_CPU_MATH_CLONES
#endif

namespace loom::cpu {

// --------------------------------------------------------------- unary ---

template <class T, class U, class Op>
LOOM_CPU_CLONES void unary_flat(T* o, const U* a, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) o[i] = op(a[i]);
}

template <class T, class U, class Op>
void unary_strided(T* o, int64_t so, const U* a, int64_t sa, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) o[i * so] = op(a[i * sa]);
}

// out = op(a) elementwise; `a` may have another element type U (copy_).
template <class T, class U, class Op>
void apply_unary(const LoomTensorDesc& out, const LoomTensorDesc& a, Op op) {
  T* po = plugin::data_ptr<T>(out);
  const U* pa = plugin::data_ptr<const U>(a);
  if (all_contiguous(out, a)) {
    parallel_for(plugin::numel(out), kParallelGrain,
                 [&](int64_t s, int64_t e) { unary_flat(po + s, pa + s, e - s, op); });
    return;
  }
  const int64_t* strides[2] = {out.strides, a.strides};
  plugin::StridedIter<2> it;
  const int64_t n = it.init(out.ndim, out.shape, strides);
  const int64_t so = it.inner_stride(0), sa = it.inner_stride(1);
  parallel_for(n, kParallelGrain, [&](int64_t s, int64_t e) {
    it.for_each_run(s, e, [&](const int64_t* off, int64_t len) {
      T* o = po + off[0];
      const U* x = pa + off[1];
      if (so == 1 && sa == 1) {
        unary_flat(o, x, len, op);
      } else if (so == 1 && sa == 0) {  // broadcast: one value for the run
        const T v = op(*x);
        for (int64_t i = 0; i < len; ++i) o[i] = v;
      } else {
        unary_strided(o, so, x, sa, len, op);
      }
    });
  });
}

// o[0..n) = v (fill_).
template <class T>
LOOM_CPU_CLONES void fill_flat(T* o, int64_t n, T v) {
  for (int64_t i = 0; i < n; ++i) o[i] = v;
}

// -------------------------------------------------------------- binary ---

template <class T, class Op>
LOOM_CPU_CLONES void binary_vv(T* o, const T* a, const T* b, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], b[i]);
}

template <class T, class Op>
LOOM_CPU_CLONES void binary_vs(T* o, const T* a, T b, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], b);
}

template <class T, class Op>
LOOM_CPU_CLONES void binary_sv(T* o, T a, const T* b, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) o[i] = op(a, b[i]);
}

template <class T, class Op>
void binary_strided(T* o, int64_t so, const T* a, int64_t sa, const T* b, int64_t sb, int64_t n,
                    Op op) {
  for (int64_t i = 0; i < n; ++i) o[i * so] = op(a[i * sa], b[i * sb]);
}

// out = op(a, b) elementwise; all three share shape and dtype T.
template <class T, class Op>
void apply_binary(const LoomTensorDesc& out, const LoomTensorDesc& a, const LoomTensorDesc& b,
                  Op op) {
  T* po = plugin::data_ptr<T>(out);
  const T* pa = plugin::data_ptr<const T>(a);
  const T* pb = plugin::data_ptr<const T>(b);
  if (all_contiguous(out, a, b)) {
    parallel_for(plugin::numel(out), kParallelGrain,
                 [&](int64_t s, int64_t e) { binary_vv(po + s, pa + s, pb + s, e - s, op); });
    return;
  }
  const int64_t* strides[3] = {out.strides, a.strides, b.strides};
  plugin::StridedIter<3> it;
  const int64_t n = it.init(out.ndim, out.shape, strides);
  const int64_t so = it.inner_stride(0), sa = it.inner_stride(1), sb = it.inner_stride(2);
  parallel_for(n, kParallelGrain, [&](int64_t s, int64_t e) {
    it.for_each_run(s, e, [&](const int64_t* off, int64_t len) {
      T* o = po + off[0];
      const T* x = pa + off[1];
      const T* y = pb + off[2];
      if (so == 1 && sa == 1 && sb == 1) binary_vv(o, x, y, len, op);
      else if (so == 1 && sa == 1 && sb == 0) binary_vs(o, x, *y, len, op);
      else if (so == 1 && sa == 0 && sb == 1) binary_sv(o, *x, y, len, op);
      else binary_strided(o, so, x, sa, y, sb, len, op);
    });
  });
}

}  // namespace loom::cpu
