// loom/op_tables.h — the elementwise part of the op catalog as tables.
//
// One list per family, expanded wherever the ops are listed: their
// definitions (core/src/ops_unary.cpp, ops_binary.cpp), the C++ functions
// (loom/ops.h), the Tensor methods (loom/tensor.h) and later the Python
// bindings. Adding a row adds the op everywhere; the CPU plugin's kernels are
// registered by name (plugins/cpu/unary.cpp, binary.cpp).
//
// Dtype rules (docs/kernel_conventions.md):
//   Float       integers and bool compute in float32, floats keep their dtype
//   FloatOnly   integers and bool are rejected
//   Same        the dtype stays
//   SameNoBool  the dtype stays; bool is rejected
//   Square      the dtype stays; bool computes in int64
#pragma once

// X(name, rule): `Tensor name(const Tensor&)` and its in-place `name_`.
#define LOOM_UNARY_OPS(X) \
  X(abs, SameNoBool)      \
  X(sign, Same)           \
  X(square, Square)       \
  X(exp2, Float)          \
  X(expm1, Float)         \
  X(log, Float)           \
  X(log2, Float)          \
  X(log1p, Float)         \
  X(sqrt, Float)          \
  X(rsqrt, Float)         \
  X(reciprocal, Float)    \
  X(sin, Float)           \
  X(cos, Float)           \
  X(tan, Float)           \
  X(tanh, Float)          \
  X(sigmoid, Float)       \
  X(erf, Float)           \
  X(floor, SameNoBool)    \
  X(ceil, SameNoBool)     \
  X(trunc, SameNoBool)    \
  X(silu, FloatOnly)

// X(name): `Tensor name(const Tensor&)` returning bool; no in-place form.
#define LOOM_PREDICATE_OPS(X) \
  X(logical_not)              \
  X(isnan)                    \
  X(isinf)                    \
  X(isfinite)

// X(name, rule, inplace): `Tensor name(const Tensor&, const Tensor&)`, and
// `name_` when inplace is 1.
//   Arith     promoted dtype, bool rejected
//   Extremum  promoted dtype (bool allowed)
//   FloatBin  promoted, integers compute in float32
//   Bitwise   promoted, integers and bool only
//   Compare   inputs promoted, bool result
//   Logical   inputs promoted, bool result
#define LOOM_BINARY_OPS(X)      \
  X(remainder, Arith, 1)        \
  X(pow, Arith, 1)              \
  X(maximum, Extremum, 0)       \
  X(minimum, Extremum, 0)       \
  X(atan2, FloatBin, 1)         \
  X(bitwise_and, Bitwise, 1)    \
  X(bitwise_or, Bitwise, 1)     \
  X(bitwise_xor, Bitwise, 1)    \
  X(logical_and, Logical, 1)    \
  X(logical_or, Logical, 1)     \
  X(logical_xor, Logical, 1)    \
  X(eq, Compare, 0)             \
  X(ne, Compare, 0)             \
  X(lt, Compare, 0)             \
  X(le, Compare, 0)             \
  X(gt, Compare, 0)             \
  X(ge, Compare, 0)
