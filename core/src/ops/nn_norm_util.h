// nn_norm_util.h (core-internal) — what the normalisation ops share:
// layer_norm, rms_norm and group_norm (ops_nn_norm.cpp), batch_norm and its gradient
// op (ops_batch_norm.cpp). Argument checks, the statistics' dtype, and the
// standardisation math their composites and derivatives are written with.
#pragma once

#include "autograd/formula.h"
#include "opmath.h"

#include <loom/error.h>
#include <loom/op_call.h>
#include <loom/ops.h>

#include <string>

namespace loom::detail::norm {

// The dtype statistics are computed in: float32 for the 16-bit floats.
inline DType stats_dtype(DType t) { return opmath_dtype(t); }

// The distance from 1 to the next value of a floating dtype (torch.finfo's
// eps): rms_norm's default eps.
constexpr double dtype_epsilon(DType t) {
  switch (t) {
    case DType::Float16: return 0.0009765625;      // 2^-10
    case DType::BFloat16: return 0.0078125;        // 2^-7
    case DType::Float64: return 2.220446049250313e-16;  // 2^-52
    default: return 1.1920928955078125e-07;        // float32: 2^-23
  }
}

inline void check_floating(const std::string& op, const Tensor& t, const char* what) {
  LOOM_CHECK(is_floating_point(t.dtype()), op, ": expected a floating point ", what, ", got ", name(t.dtype()));
}

// An optional per-channel (or per-feature) parameter: absent, or of the
// input's dtype with `n` elements.
inline void check_param(const std::string& op, const Tensor* p, const char* what, DType dtype, int64_t n) {
  if (!p || !p->defined()) return;
  LOOM_CHECK(p->dtype() == dtype, op, ": expected ", what, " of dtype ", name(dtype), " (the input's), got ",
             name(p->dtype()));
  LOOM_CHECK(p->numel() == n, op, ": ", what, " should contain ", n, " elements not ", p->numel(),
             " (shape ", shape_str(p->sizes()), ")");
}

// One output of `dtype` shaped like `like`.
inline void plan_output(OpCall& call, DType dtype, IntArrayRef sizes) {
  auto& plan = call.outputs.emplace_back();
  plan.dtype = dtype;
  plan.sizes = DimVector(sizes);
}

// One output shaped and typed like the input (for the composites).
inline void plan_like_input(OpCall& call) {
  plan_output(call, call.arg(0).dtype(), call.arg(0).sizes());
  call.compute_dtype = call.arg(0).dtype();
}

// y * weight + bias, each (when given) reshaped to `pshape`.
inline Tensor affine(Tensor y, const Tensor* weight, const Tensor* bias, IntArrayRef pshape) {
  if (weight && weight->defined()) y = y * weight->reshape(pshape);
  if (bias && bias->defined()) y = y + bias->reshape(pshape);
  return y;
}

// A number as a 0-d tensor of `like`'s dtype. (A loom Scalar becomes a
// float32 tensor, which would round eps or momentum for float64 inputs.)
inline Tensor num(double v, const Tensor& like) { return full({}, v, like.dtype(), like.device()); }

inline Tensor normalize(const Tensor& x, const Tensor& mean, const Tensor& var, double eps) {
  return (x - mean) * rsqrt(var + num(eps, var));
}

// x normalised over `dims`: x̂ = (x - mean) · rstd.
struct Standardized {
  Tensor xhat, rstd;
};

// With the batch's statistics (biased variance).
inline Standardized standardize(const Tensor& x, IntArrayRef dims, double eps) {
  const Tensor m = mean(x, dims, true);
  const Tensor rstd = rsqrt(var(x, dims, Scalar(0), true) + num(eps, x));
  return {(x - m) * rstd, rstd};
}

// d/dx of x̂ given the gradient g of x̂ (the dims' statistics depend on x):
// rstd · (g - mean(g) - x̂ · mean(g x̂)).
inline Tensor standardize_backward(const Standardized& s, const Tensor& g, IntArrayRef dims) {
  return s.rstd * (g - mean(g, dims, true) - s.xhat * mean(g * s.xhat, dims, true));
}

// Every dim but the channels (1): the dims batch_norm reduces and its
// per-channel parameters' gradients sum over.
inline DimVector all_but_channels(int64_t ndim) {
  DimVector dims;
  for (int64_t d = 0; d < ndim; ++d)
    if (d != 1) dims.push_back(d);
  return dims;
}

// [1, C, 1, ...]: a per-channel parameter shaped to broadcast over the input.
inline DimVector channel_shape(int64_t ndim, int64_t C) {
  DimVector s(static_cast<size_t>(ndim), 1);
  s[1] = C;
  return s;
}

}  // namespace loom::detail::norm
