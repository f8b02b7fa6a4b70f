// clip_grad.cpp — clip_grad_norm_ and clip_grad_value_ (torch 1.13's rules).
#include <loom/autograd.h>
#include <loom/error.h>
#include <loom/ops.h>
#include <loom/ops/shape.h>
#include <loom/optim/clip_grad.h>

#include <cmath>

namespace loom::optim {

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  autograd::NoGradGuard no_grad;
  LOOM_CHECK(norm_type > 0 || std::isinf(norm_type), "optim: clip_grad_norm_: norm_type must be positive, got ",
             norm_type);
  std::vector<Tensor> grads;
  for (const Tensor& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;

  // One norm per gradient, then the norm of those norms (computed in float64
  // on the host: a handful of numbers, and the caller wants a double anyway).
  std::vector<Tensor> norms;
  for (const Tensor& g : grads) {
    norms.push_back(std::isinf(norm_type) ? amax(g.abs()).to(DType::Float64).cpu()
                                          : norm(g, norm_type).to(DType::Float64).cpu());
  }
  const Tensor all = stack(norms);
  const double total = std::isinf(norm_type) ? amax(all).item<double>() : norm(all, norm_type).item<double>();
  LOOM_CHECK(!error_if_nonfinite || std::isfinite(total), "optim: clip_grad_norm_: the total norm of order ",
             norm_type, " of the gradients is non-finite (", total, "), so it cannot be clipped");
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1) {
    for (Tensor& g : grads) g.mul_(scalar_tensor(coef, g.device()));
  }
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  autograd::NoGradGuard no_grad;
  LOOM_CHECK(clip_value >= 0, "optim: clip_grad_value_: clip_value must not be negative, got ", clip_value);
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (g.defined()) g.clamp_(-clip_value, clip_value);
  }
}

}  // namespace loom::optim
