// ops_loss.cpp — the regression and binary classification losses as
// composites of elementwise ops and a final mean/sum. They run on every
// device that has those ops, and autograd will differentiate them through
// their parts. Validation follows torch 1.13: the regression losses
// broadcast input and target, the binary cross entropies need equal shapes.
#include <loom/error.h>
#include <loom/op_call.h>
#include <loom/ops.h>

namespace loom {
namespace {

enum class Reduction { None, Mean, Sum };

Reduction parse_reduction(const char* op, const std::string& r) {
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  if (r == "none") return Reduction::None;
  throw Error(detail::cat(op, ": '", r,
                          "' is not a valid value for reduction (expected 'none', 'mean' or 'sum')"));
}

// An empty mean is NaN and an empty sum 0, as PyTorch.
Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::Mean: return mean(loss);
    case Reduction::Sum: return sum(loss);
    case Reduction::None: break;
  }
  return loss;
}

// Checks that input and target broadcast; returns their promoted dtype.
DType regression_dtype(const char* op, const Tensor& input, const Tensor& target) {
  broadcast_shapes(op, input.sizes(), target.sizes());
  return result_type({&input, &target}, op);
}

void require_floating(const char* op, const Tensor& input, const Tensor& target, DType t) {
  LOOM_CHECK(is_floating_point(t), op, ": expected floating point input and target, got ",
             name(input.dtype()), " and ", name(target.dtype()));
}

// `w` cast to `dtype`, checked to broadcast to `shape` without growing it.
Tensor weight_like(const char* op, const char* arg, const Tensor& w, IntArrayRef shape,
                   DType dtype) {
  const DimVector b = broadcast_shapes(op, shape, w.sizes());
  LOOM_CHECK(IntArrayRef(b) == shape, op, ": '", arg, "' of shape ", shape_str(w.sizes()),
             " cannot be broadcast to the input shape ", shape_str(shape));
  return w.to(dtype);
}

// A C++ number as PyTorch wraps a Python float: a 0-d float64 wrapped
// number, so it never changes the result dtype but is not rounded to
// float32 first (operator*(Tensor, Scalar) stores doubles as float32).
Tensor num(double v, Device device) {
  Tensor t = full({}, v, DType::Float64, device);
  t.impl()->set_wrapped_number(true);
  return t;
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  const char* op = "mse_loss";
  const Reduction r = parse_reduction(op, reduction);
  const DType t = regression_dtype(op, input, target);
  require_floating(op, input, target, t);
  return reduce(square(sub(input, target)), r);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  const char* op = "l1_loss";
  const Reduction r = parse_reduction(op, reduction);
  const DType t = regression_dtype(op, input, target);
  LOOM_CHECK(t != DType::Bool, op, ": bool input and target are not supported");
  LOOM_CHECK(r != Reduction::Mean || is_floating_point(t), op,
             ": reduction 'mean' needs a floating point dtype, got ", name(t),
             " (use reduction 'sum' or 'none' for integers)");
  return reduce(abs(sub(input, target)), r);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction,
                      double beta) {
  const char* op = "smooth_l1_loss";
  const Reduction r = parse_reduction(op, reduction);
  LOOM_CHECK(beta >= 0, op, ": beta must be >= 0, got ", beta);
  const DType t = regression_dtype(op, input, target);
  require_floating(op, input, target, t);
  const Tensor d = sub(input, target);
  const Tensor ad = abs(d);
  if (beta == 0) return reduce(ad, r);  // PyTorch: beta = 0 is exactly l1_loss
  // 0.5 d^2 / beta below beta, |d| - beta / 2 above.
  const Device dev = d.device();
  return reduce(where(lt(ad, num(beta, dev)), mul(square(d), num(0.5 / beta, dev)),
                      sub(ad, num(0.5 * beta, dev))),
                r);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const std::string& reduction,
                  double delta) {
  const char* op = "huber_loss";
  const Reduction r = parse_reduction(op, reduction);
  LOOM_CHECK(delta > 0, op, ": delta must be > 0, got ", delta);
  const DType t = regression_dtype(op, input, target);
  require_floating(op, input, target, t);
  const Tensor d = sub(input, target);
  const Tensor ad = abs(d);
  const Device dev = d.device();
  return reduce(where(lt(ad, num(delta, dev)), square(d) * 0.5,
                      mul(sub(ad, num(0.5 * delta, dev)), num(delta, dev))),
                r);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            const std::string& reduction) {
  const char* op = "binary_cross_entropy";
  const Reduction r = parse_reduction(op, reduction);
  LOOM_CHECK(input.sizes() == target.sizes(), op, ": target size ", shape_str(target.sizes()),
             " must be the same as input size ", shape_str(input.sizes()));
  LOOM_CHECK(input.is_floating_point(), op, ": expected a floating point input, got ",
             name(input.dtype()));
  LOOM_CHECK(target.dtype() == input.dtype(), op, ": expected target of the input's dtype ",
             name(input.dtype()), ", got ", name(target.dtype()));
  const DType t = input.dtype();
  Tensor w;
  if (weight.defined()) w = weight_like(op, "weight", weight, input.sizes(), t);
  if (input.numel() > 0) {
    // min/max propagate NaN, so a NaN input fails the check too.
    const double lo = min(input).item<double>(), hi = max(input).item<double>();
    LOOM_CHECK(lo >= 0 && hi <= 1, op, ": all elements of input should be between 0 and 1, got "
               "values in [", lo, ", ", hi, "]");
  }
  // PyTorch's CPU formula: (t - 1) max(log1p(-x), -100) - t max(log x, -100);
  // the clamp keeps 0 * log(0) from becoming NaN.
  const Tensor log_x = clamp(log(input), -100.0);
  const Tensor log_1mx = clamp(log1p(neg(input)), -100.0);
  Tensor loss = sub(mul(target - 1.0, log_1mx), mul(target, log_x));
  if (w.defined()) loss = mul(loss, w);
  return reduce(loss, r);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, const Tensor& pos_weight,
                                        const std::string& reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  const Reduction r = parse_reduction(op, reduction);
  LOOM_CHECK(input.sizes() == target.sizes(), op, ": target size ", shape_str(target.sizes()),
             " must be the same as input size ", shape_str(input.sizes()));
  LOOM_CHECK(input.is_floating_point() && target.is_floating_point(), op,
             ": expected floating point input and target, got ", name(input.dtype()), " and ",
             name(target.dtype()));
  const DType t = result_type({&input, &target}, op);
  const Tensor x = input.to(t), y = target.to(t);
  // log(1 + e^-x) = softplus(-x): no overflow for large |x|.
  const Tensor sp = softplus(neg(x));
  Tensor loss;
  if (pos_weight.defined()) {
    // l = 1 + (pos_weight - 1) t weighs the positive term only.
    const Tensor pw = weight_like(op, "pos_weight", pos_weight, input.sizes(), t);
    const Tensor l = mul(pw - 1.0, y) + 1.0;
    loss = add(mul(1.0 - y, x), mul(l, sp));
  } else {
    loss = add(mul(1.0 - y, x), sp);
  }
  if (weight.defined()) loss = mul(loss, weight_like(op, "weight", weight, input.sizes(), t));
  return reduce(loss, r);
}

}  // namespace loom
