/* loom/plugin/op_tables.h — the elementwise part of the op catalog as
 * tables, shared by the core and every device plugin (C and C++).
 *
 * One X-macro list per family. The core expands them into the ops'
 * definitions (core/src/ops/ops_unary.cpp, ops_binary.cpp), the C++ functions
 * (loom/ops.h) and Tensor methods (loom/tensor.h); plugins expand the rule
 * column into their kernels' dtype masks (loom/plugin/op_rules.hpp), so a
 * kernel's mask cannot disagree with the dtype the core computes in. Adding
 * a row adds the op everywhere; docs/kernel_conventions.md's tables are
 * checked against these rows by core/tests/op_tables_test.cpp.
 *
 * The rule column says which dtype the kernel computes in (the *compute
 * dtype*, the dtype of inputs[0] when the kernel runs):
 *
 *   unary rules
 *     Float       integers and bool are cast to float32; floats keep their dtype
 *     FloatOnly   integers and bool are rejected
 *     Same        the dtype stays
 *     SameNoBool  the dtype stays; bool is rejected
 *     Square      the dtype stays; bool is cast to int64
 *     ToBool      the dtype stays; the output is bool
 *   binary rules (inputs promoted to PyTorch's result_type first)
 *     Arith       promoted dtype, bool rejected
 *     Extremum    promoted dtype (bool allowed)
 *     FloatBin    promoted, integers and bool cast to float32
 *     Bitwise     promoted, integers and bool only
 *     Compare     promoted; the output is bool
 *     Logical     promoted; the output is bool
 */
#ifndef LOOM_PLUGIN_OP_TABLES_H
#define LOOM_PLUGIN_OP_TABLES_H

/* X(name, rule): `name(Tensor self) -> Tensor` and its in-place `name_`. */
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

/* X(name): `name(Tensor self) -> Tensor` returning bool (rule ToBool); no
 * in-place form. */
#define LOOM_PREDICATE_OPS(X) \
  X(logical_not)              \
  X(isnan)                    \
  X(isinf)                    \
  X(isfinite)

/* X(name, rule): unary ops whose schema has more arguments than `self`, or
 * whose definition the core writes by hand (neg's own error message, the
 * hot paths of relu and exp). Each has an in-place `name_`. Their core
 * definitions check their rule against this table at compile time. */
#define LOOM_UNARY_SPECIAL_OPS(X) \
  X(neg, SameNoBool)              \
  X(relu, SameNoBool)             \
  X(exp, Float)                   \
  X(round, SameNoBool)            \
  X(gelu, FloatOnly)              \
  X(softplus, FloatOnly)          \
  X(elu, FloatOnly)               \
  X(leaky_relu, FloatOnly)        \
  X(nan_to_num, Same)             \
  X(clamp, SameNoBool)

/* X(name, rule, inplace, Functor): `name(Tensor self, Tensor other) ->
 * Tensor`, and `name_` when inplace is 1. Functor is the per-element rule in
 * loom/plugin/scalar_ops.hpp (a predicate for Compare and Logical, a
 * template on the storage type otherwise); the CPU and CUDA plugins register
 * their kernels for these rows by expanding this table. */
#define LOOM_BINARY_OPS(X)              \
  X(remainder, Arith, 1, Remainder)     \
  X(fmod, Arith, 1, Fmod)               \
  X(pow, Arith, 1, Pow)                 \
  X(maximum, Extremum, 0, Maximum)      \
  X(minimum, Extremum, 0, Minimum)      \
  X(atan2, FloatBin, 1, Atan2)          \
  X(bitwise_and, Bitwise, 1, BitAnd)    \
  X(bitwise_or, Bitwise, 1, BitOr)      \
  X(bitwise_xor, Bitwise, 1, BitXor)    \
  X(logical_and, Logical, 1, LogicalAnd) \
  X(logical_or, Logical, 1, LogicalOr)  \
  X(logical_xor, Logical, 1, LogicalXor) \
  X(eq, Compare, 0, Eq)                 \
  X(ne, Compare, 0, Ne)                 \
  X(lt, Compare, 0, Lt)                 \
  X(le, Compare, 0, Le)                 \
  X(gt, Compare, 0, Gt)                 \
  X(ge, Compare, 0, Ge)

/* X(name, rule): binary and ternary ops the core defines by hand (add's and
 * sub's alpha, mul's bool rule, lerp's weight), each with an in-place
 * `name_`. add and mul take bool (logical or / and: rule Extremum's dtypes),
 * sub does not; lerp is floating only (FloatOnly: the core rejects
 * integers). */
#define LOOM_BINARY_SPECIAL_OPS(X) \
  X(add, Extremum)                 \
  X(sub, Arith)                    \
  X(mul, Extremum)                 \
  X(lerp, FloatOnly)

#endif /* LOOM_PLUGIN_OP_TABLES_H */
