// The one driver behind every kernel of unary.cpp and unary_float.cpp
// (docs/kernel_conventions.md, "Elementwise unary ops").
//
// An op is a *family*: a struct with
//   static constexpr const char* name;   // the op: its dtype rule and in-place
//                                        // form are the table's (op_rules.hpp)
//   template <class T> static Fn make(const LoomKernelCall&);
// where `make` reads and checks the op's values and returns a small functor
// `Out operator()(T) const` (Out = T, or bool for the to-bool ops) that is exact
// for every input. unary_kernel<Family> is then the whole kernel.
//
// Loops: contiguous operands take one flat loop (AVX2 and baseline clones),
// split across OpenMP threads only past kParallelGrain; anything else walks
// plugin::StridedIter runs, whose unit-stride and broadcast (stride 0) runs
// still take the flat loop or a fill. A 1-element call costs a few branches
// and no allocation. An output may alias its input element for element
// (in-place forms): every element is read before it is written.
//
// Fast path: a functor whose exact form cannot vectorise (it calls libm for
// a rare argument range, e.g. sin of a huge float) also provides
// `bool fast_ok(T)` and `Out fast(T)`, branch-free. Contiguous data then goes
// in L1-sized blocks: a block whose every element passes fast_ok runs `fast`,
// any other block the exact functor.
#pragma once

#include <loom/plugin/op_rules.hpp>

#include "common.hpp"
#include "loops.hpp"  // LOOM_CPU_CLONES

#include <loom/plugin/strided.hpp>

#include <concepts>
#include <cstdint>
#include <string>

namespace loom::cpu {

template <class Fn, class T>
concept HasFastPath = requires(const Fn& f, T x) {
  { f.fast_ok(x) } -> std::convertible_to<bool>;
  f.fast(x);
};

// flatten: the functor and everything it calls is inlined, however large
// (GCC's heuristics otherwise leave a call in the loop, which stops
// vectorisation); only out-of-line libm calls stay calls.
template <class Out, class In, class Fn>
[[gnu::flatten]] LOOM_CPU_MATH_CLONES void map_exact(Out* o, const In* a, int64_t n, Fn f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
}

template <class Out, class In, class Fn>
[[gnu::flatten]] LOOM_CPU_MATH_CLONES void map_fast(Out* o, const In* a, int64_t n, Fn f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f.fast(a[i]);
}

// An int accumulator rather than an early exit, so the scan vectorises.
template <class In, class Fn>
[[gnu::flatten]] LOOM_CPU_CLONES bool all_fast(const In* a, int64_t n, Fn f) {
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) bad |= f.fast_ok(a[i]) ? 0 : 1;
  return bad == 0;
}

// One contiguous run of n elements.
template <class Out, class In, class Fn>
inline void map_run(Out* o, const In* a, int64_t n, const Fn& f) {
  if constexpr (HasFastPath<Fn, In>) {
    constexpr int64_t kBlock = 1024;  // scanned, then computed, while in L1
    for (int64_t s = 0; s < n; s += kBlock) {
      const int64_t len = n - s < kBlock ? n - s : kBlock;
      if (all_fast(a + s, len, f))
        map_fast(o + s, a + s, len, f);
      else
        map_exact(o + s, a + s, len, f);
    }
  } else {
    map_exact(o, a, n, f);
  }
}

// out = f(in) elementwise; same shape, any strides.
template <class Out, class In, class Fn>
void map_unary(const LoomTensorDesc& out, const LoomTensorDesc& in, const Fn& f) {
  Out* po = plugin::data_ptr<Out>(out);
  const In* pa = plugin::data_ptr<const In>(in);
  if (all_contiguous(out, in)) {
    parallel_for(plugin::numel(out), kParallelGrain,
                 [&](int64_t s, int64_t e) { map_run(po + s, pa + s, e - s, f); });
    return;
  }
  const int64_t* strides[2] = {out.strides, in.strides};
  plugin::StridedIter<2> it;
  const int64_t n = it.init(out.ndim, out.shape, strides);
  const int64_t so = it.inner_stride(0), sa = it.inner_stride(1);
  parallel_for(n, kParallelGrain, [&](int64_t s, int64_t e) {
    it.for_each_run(s, e, [&](const int64_t* off, int64_t len) {
      Out* o = po + off[0];
      const In* x = pa + off[1];
      if (so == 1 && sa == 1) {
        map_run(o, x, len, f);
      } else if (so == 1 && sa == 0) {  // broadcast input: one value per run
        const Out v = f(*x);
        for (int64_t i = 0; i < len; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < len; ++i) o[i * so] = f(x[i * sa]);
      }
    });
  });
}

// Hands the family's functor for dtype-type T to k. A family whose values
// select between functor types (gelu's two forms, so each loop stays
// branch-free) provides `visit<T>(call, k)` instead of `make<T>(call)`.
template <class Family, class T, class K>
void with_functor(const LoomKernelCall& c, K&& k) {
  if constexpr (requires { Family::template make<T>(c); })
    k(Family::template make<T>(c));
  else
    Family::template visit<T>(c, k);
}

template <class Family>
void unary_kernel(const LoomKernelCall& c) {
  constexpr const char* name = Family::name;
  expect_arity(c, name, 1, 1);
  const LoomTensorDesc& out = c.outputs[0];
  const LoomTensorDesc& in = c.inputs[0];
  if constexpr (plugin::op_returns_bool(name)) {  // the input keeps its own dtype
    expect_like(in, out, name, /*same_dtype=*/false);
    if (out.dtype != LOOM_DTYPE_BOOL) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: the output must be bool, got %s", name,
           plugin::dtype_name(out.dtype));
    dispatch<DTypes::All>(in.dtype, name, [&](auto tag) {
      using T = decltype(tag);
      with_functor<Family, T>(c, [&](const auto& f) { map_unary<bool, T>(out, in, f); });
    });
  } else {
    expect_like(in, out, name);
    dispatch<plugin::op_class(name)>(out.dtype, name, [&](auto tag) {
      using T = decltype(tag);
      with_functor<Family, T>(c, [&](const auto& f) { map_unary<T, T>(out, in, f); });
    });
  }
}

// ---------------------------------------------------------- arguments ---

// The op's i-th value, after checking there is one.
inline const LoomValue& value_at(const LoomKernelCall& c, const char* op, int32_t i) {
  expect_values(c, op, i + 1);
  return c.values[i];
}

// A Scalar value (BOOL, INT or FLOAT) as dtype-type T, cast as cast.hpp does.
template <class T>
T scalar_arg(const LoomKernelCall& c, const char* op, int32_t i) {
  const LoomValue& v = value_at(c, op, i);
  if (v.kind != LOOM_VALUE_BOOL && v.kind != LOOM_VALUE_INT && v.kind != LOOM_VALUE_FLOAT)
      [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: argument %d must be a Scalar, got value kind %d",
         op, i, v.kind);
  return scalar_as<T>(v);
}

// ----------------------------------------------------------- registry ---

// Registers the family's kernel as `name` and, when the table gives the op
// one, as `name_`, with the table's mask. file:line default to the caller's,
// for the host's messages.
template <class Family>
void register_unary(plugin::Registrar& r, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  constexpr uint64_t mask = plugin::op_mask(Family::name);
  constexpr LoomKernelFn fn = plugin::kernel<unary_kernel<Family>>;
  r.kernel(Family::name, "cpu", fn, mask, 0, nullptr, file, line);
  if constexpr (plugin::op_has_in_place(Family::name)) {
    const std::string inplace = std::string(Family::name) + "_";  // init only
    r.kernel(inplace.c_str(), "cpu", fn, mask, 0, nullptr, file, line);
  }
}

}  // namespace loom::cpu
