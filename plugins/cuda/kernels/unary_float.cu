// The float-rule unary CUDA kernels (exp ... erf: the core casts integers
// and bool to float32 first) and the float-only activations gelu, silu,
// softplus, elu, leaky_relu (docs/kernel_conventions.md, "Elementwise unary
// ops"), registered with their in-place forms as the CPU plugin does.
// Functors: unary_ops.cuh (MathOp and the *Fn math); driver: unary_driver.cuh.
// Also the activations' gradient ops (_gelu_backward ... _leaky_relu_backward),
// whose math is loom/plugin/scalar_ops.hpp's, shared with the CPU plugin.
//
// Only the four floating dtypes are instantiated: 16-bit floats compute in
// float, float64 in double.
#include "unary_driver.cuh"
#include "unary_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <loom/plugin/scalar_ops.hpp>

#include <utility>

namespace loom::LOOM_GPU_NAMESPACE::ew {
namespace {

// A value-less float op: Fn<V> through MathOp.
#define LOOM_CUDA_FLOAT_OP(Family, op_name, Fn)    \
  struct Family {                                  \
    static constexpr const char* name = op_name;   \
    static constexpr bool copies_integers = false; \
    template <class T>                             \
    static MathOp<Fn, T> make(const LoomKernelCall&) { \
      return {};                                   \
    }                                              \
  };

LOOM_CUDA_FLOAT_OP(ExpFamily, "exp", ExpFn)
LOOM_CUDA_FLOAT_OP(Exp2Family, "exp2", Exp2Fn)
LOOM_CUDA_FLOAT_OP(Expm1Family, "expm1", Expm1Fn)
LOOM_CUDA_FLOAT_OP(LogFamily, "log", LogFn)
LOOM_CUDA_FLOAT_OP(Log2Family, "log2", Log2Fn)
LOOM_CUDA_FLOAT_OP(Log1pFamily, "log1p", Log1pFn)
LOOM_CUDA_FLOAT_OP(SqrtFamily, "sqrt", SqrtFn)
LOOM_CUDA_FLOAT_OP(RsqrtFamily, "rsqrt", RsqrtFn)
LOOM_CUDA_FLOAT_OP(ReciprocalFamily, "reciprocal", ReciprocalFn)
LOOM_CUDA_FLOAT_OP(SinFamily, "sin", SinFn)
LOOM_CUDA_FLOAT_OP(CosFamily, "cos", CosFn)
LOOM_CUDA_FLOAT_OP(TanFamily, "tan", TanFn)
LOOM_CUDA_FLOAT_OP(TanhFamily, "tanh", TanhFn)
LOOM_CUDA_FLOAT_OP(SigmoidFamily, "sigmoid", SigmoidFn)
LOOM_CUDA_FLOAT_OP(ErfFamily, "erf", ErfFn)
LOOM_CUDA_FLOAT_OP(SiluFamily, "silu", SiluFn)

#undef LOOM_CUDA_FLOAT_OP

// softplus(beta, threshold), both in the compute type (not rounded to T).
struct SoftplusFamily {
  static constexpr const char* name = "softplus";
  static constexpr bool copies_integers = false;
  template <class T>
  static MathOp<SoftplusFn, T> make(const LoomKernelCall& c) {
    using C = opmath_t<T>;
    return {{scalar_arg<C>(c, name, 0), scalar_arg<C>(c, name, 1)}};
  }
};

// elu(alpha, scale, input_scale).
struct EluFamily {
  static constexpr const char* name = "elu";
  static constexpr bool copies_integers = false;
  template <class T>
  static MathOp<EluFn, T> make(const LoomKernelCall& c) {
    using C = opmath_t<T>;
    return {{scalar_arg<C>(c, name, 0), scalar_arg<C>(c, name, 1), scalar_arg<C>(c, name, 2)}};
  }
};

// leaky_relu(negative_slope).
struct LeakyReluFamily {
  static constexpr const char* name = "leaky_relu";
  static constexpr bool copies_integers = false;
  template <class T>
  static MathOp<LeakyReluFn, T> make(const LoomKernelCall& c) {
    return {{scalar_arg<opmath_t<T>>(c, name, 0)}};
  }
};

// gelu's `approximate` (values[0], the STRING 'none' or 'tanh'): true for
// 'tanh'; anything else fails naming the op.
bool gelu_tanh_form(const LoomKernelCall& c, const char* name) {
  const LoomValue& v = value_at(c, name, 0);
  const bool tanh_form = string_is(v, "tanh");
  if (!tanh_form && !string_is(v, "none")) [[unlikely]]
    fail_args(name, "approximate must be 'none' or 'tanh', got " + string_of(v));
  return tanh_form;
}

// gelu(approximate): two functor types (erf and tanh forms), so each
// kernel is branch-free; values[0] is the STRING 'none' or 'tanh'.
void gelu(const LoomKernelCall& c) {
  constexpr const char* name = "gelu";
  expect_arity(c, name, 1, 1);
  const LoomTensorDesc& out = c.outputs[0];
  const LoomTensorDesc& in = c.inputs[0];
  expect_like(in, out, name);
  const bool tanh_form = gelu_tanh_form(c, name);
  visit<DTypes::Floating>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    if (tanh_form) elementwise<T, T>(out, {&in}, MathOp<GeluTanhFn, T>{}, enter(c), name);
    else elementwise<T, T>(out, {&in}, MathOp<GeluErfFn, T>{}, enter(c), name);
  });
}

// _gelu_backward(grad_output, self, approximate): grad times gelu's slope in
// one pass (the core's composite takes about ten elementwise ops), by the
// shared functor (loom/plugin/scalar_ops.hpp) in the compute type.
void gelu_backward(const LoomKernelCall& c) {
  constexpr const char* name = "_gelu_backward";
  expect_arity(c, name, 2, 1);
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 2; ++i) expect_like(c.inputs[i], out, name);
  const bool tanh_form = gelu_tanh_form(c, name);
  visit<DTypes::Floating>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    if (tanh_form)
      elementwise<T, T, T>(out, {&c.inputs[0], &c.inputs[1]}, plugin::ops::GeluBackward<T, true>{}, enter(c), name);
    else
      elementwise<T, T, T>(out, {&c.inputs[0], &c.inputs[1]}, plugin::ops::GeluBackward<T, false>{}, enter(c), name);
  });
}

// The other activations' gradients (_threshold_backward ...
// _leaky_relu_backward): one pass of the shared functor, as the CPU plugin
// runs it, its parameters the op's Scalar values in order.
template <template <class> class F, size_t... I>
void activation_backward(const LoomKernelCall& c, const char* name, std::index_sequence<I...>) {
  expect_arity(c, name, 2, 1);
  const LoomTensorDesc& out = c.outputs[0];
  for (int32_t i = 0; i < 2; ++i) expect_like(c.inputs[i], out, name);
  visit<DTypes::Floating>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    const F<T> f{scalar_arg<opmath_t<T>>(c, name, static_cast<int32_t>(I))...};
    elementwise<T, T, T>(out, {&c.inputs[0], &c.inputs[1]}, f, enter(c), name);
  });
}

#define LOOM_CUDA_ACTIVATION_BACKWARD(fn, op, Functor, values)                             \
  void fn(const LoomKernelCall& c) {                                                        \
    activation_backward<plugin::ops::Functor>(c, op, std::make_index_sequence<values>{});   \
  }
LOOM_PLUGIN_ACTIVATION_BACKWARD_OPS(LOOM_CUDA_ACTIVATION_BACKWARD)
#undef LOOM_CUDA_ACTIVATION_BACKWARD

}  // namespace

void register_unary_float_kernels(plugin::Registrar& r) {
  register_unary<ExpFamily>(r);
  register_unary<Exp2Family>(r);
  register_unary<Expm1Family>(r);
  register_unary<LogFamily>(r);
  register_unary<Log2Family>(r);
  register_unary<Log1pFamily>(r);
  register_unary<SqrtFamily>(r);
  register_unary<RsqrtFamily>(r);
  register_unary<ReciprocalFamily>(r);
  register_unary<SinFamily>(r);
  register_unary<CosFamily>(r);
  register_unary<TanFamily>(r);
  register_unary<TanhFamily>(r);
  register_unary<SigmoidFamily>(r);
  register_unary<ErfFamily>(r);
  register_unary<SiluFamily>(r);
  register_unary<SoftplusFamily>(r);
  register_unary<EluFamily>(r);
  register_unary<LeakyReluFamily>(r);
  r.kernel("gelu", LOOM_GPU_NAME, plugin::kernel<gelu>, kFloatingMask);
  r.kernel("gelu_", LOOM_GPU_NAME, plugin::kernel<gelu>, kFloatingMask);
  r.kernel("_gelu_backward", LOOM_GPU_NAME, plugin::kernel<gelu_backward>, kFloatingMask);
#define LOOM_CUDA_REGISTER(fn, op, Functor, values) r.kernel(op, LOOM_GPU_NAME, plugin::kernel<fn>, kFloatingMask);
  LOOM_PLUGIN_ACTIVATION_BACKWARD_OPS(LOOM_CUDA_REGISTER)
#undef LOOM_CUDA_REGISTER
}

}  // namespace loom::LOOM_GPU_NAMESPACE::ew
