// gradient_case.cpp — gradients of one sample on the device vs CPU float64.
#include "gradient_case.h"

#include "fallback_ops.h"

#include <loom/dispatch_trace.h>
#include <loom/loom.h>
#include <loom/op_registry.h>

#include <algorithm>
#include <cmath>

namespace loom::conformance {
namespace {

using TensorList = std::vector<std::optional<Tensor>>;

struct Backward {
  std::vector<Tensor> grads;  // per sample tensor; undefined where none
  std::vector<std::string> providers;
  std::string fallbacks;  // ops of forward or backward that fell back on the device
  std::string reasons;    // why they did
};

// Inputs moved to `device` in `dtype` (floating ones only), as leaves that
// require grad; backward starts from `weights` (one per output, already on
// `device`) as the outputs' gradients, so the trace holds the op's forward
// and its derivative's calls and nothing of a loss built around them.
Backward backward_on(const OpDef& op, const opinfo::Sample& s, Device device, std::optional<DType> dtype,
                     const std::vector<Tensor>& weights, bool trace_device, uint64_t seed) {
  autograd::EnableGradGuard grad_on;
  // Random ops (dropout) draw the same numbers on both sides: the streams
  // depend only on (seed, offset), never on the device.
  manual_seed(seed);
  TensorList inputs;
  for (const auto& t : s.tensors) {
    if (!t) {
      inputs.emplace_back();
      continue;
    }
    Tensor x = t->to(device);
    if (is_floating_point(x.dtype())) {
      if (dtype) x = x.to(*dtype);
      x = x.detach().clone();
      x.requires_grad_(true);
    }
    inputs.push_back(x);
  }
  Backward b;
  DispatchTrace trace;
  opinfo::RunOptions o;
  o.tensors = &inputs;
  std::vector<Tensor> outs = opinfo::run_sample(op, s, o);
  std::vector<Tensor> roots, seeds;
  for (size_t i = 0; i < outs.size() && i < weights.size(); ++i) {
    if (!is_floating_point(outs[i].dtype()) || !outs[i].requires_grad()) continue;
    roots.push_back(outs[i]);
    seeds.push_back(weights[i].dtype() == outs[i].dtype() ? weights[i] : weights[i].to(outs[i].dtype()));
  }
  LOOM_CHECK(!roots.empty(), op.name(), ": no differentiable floating output for this sample");
  autograd::backward(roots, seeds);
  for (const auto& x : inputs) b.grads.push_back(x && x->requires_grad() ? x->grad() : Tensor());
  if (trace_device) {
    b.providers = trace.providers();
    b.fallbacks = fallen_back_ops(trace, device.type);
    b.reasons = fallback_reasons(trace, device.type);
  }
  return b;
}

}  // namespace

void run_gradient_case(const OpDef& op, const opinfo::Sample& s, Device device, Tolerance tol, CaseResult& r) {
  // Output shapes (and whether the CPU takes the sample at all) from a plain run.
  std::vector<Tensor> plain;
  try {
    plain = opinfo::run_sample(op, s);
  } catch (const std::exception& e) {
    r.status = Status::Unsupported;
    r.message = std::string("the CPU reference rejects this case: ") + e.what();
    return;
  }
  opinfo::SampleContext weights_ctx(DType::Float64, r.seed ^ 0x9e3779b97f4a7c15ull);
  std::vector<Tensor> weights;
  for (const Tensor& o : plain) weights.push_back(weights_ctx.tensor(std::vector<int64_t>(o.sizes().begin(), o.sizes().end()), -1, 1));

  Backward ref;
  try {
    ref = backward_on(op, s, cpu_device(), DType::Float64, weights, false, r.seed);
  } catch (const std::exception& e) {
    r.status = Status::Unsupported;
    r.message = std::string("no CPU gradient for this case: ") + e.what();
    return;
  }
  Backward dev;
  try {
    std::vector<Tensor> device_weights;  // moved before the trace starts
    for (size_t i = 0; i < weights.size(); ++i)
      device_weights.push_back(is_floating_point(plain[i].dtype()) ? weights[i].to(plain[i].dtype()).to(device)
                                                                    : weights[i]);
    dev = backward_on(op, s, device, std::nullopt, device_weights, true, r.seed);
  } catch (const std::exception& e) {
    r.status = Status::Error;
    r.message = std::string("backward on the device threw: ") + e.what();
    return;
  }
  std::string providers;
  for (const auto& p : dev.providers) providers += (providers.empty() ? "" : ", ") + p;
  r.providers = providers;
  for (size_t i = 0; i < ref.grads.size(); ++i) {
    if (!ref.grads[i].defined() && !dev.grads[i].defined()) continue;
    if (ref.grads[i].defined() != dev.grads[i].defined()) {
      r.status = Status::FailShape;
      r.message = "input " + std::to_string(i) + (dev.grads[i].defined() ? " has" : " has no") +
                  " gradient on the device, unlike on the CPU";
      return;
    }
    const DType want = s.tensors[i]->dtype();
    // Backward sums over broadcast and reduced dimensions, where terms
    // cancel: an error relative to each element is too strict, so the
    // absolute tolerance scales with the gradient's largest magnitude.
    Tolerance grad_tol = tol;
    double largest = 0;
    for (double g : ref.grads[i].to_vector<double>())
      if (std::isfinite(g)) largest = std::max(largest, std::fabs(g));
    grad_tol.atol = std::max(tol.atol, 2 * tol.rtol * largest);
    Comparison c = compare(dev.grads[i], ref.grads[i].to(want), opinfo::Compare::Close, grad_tol);
    r.max_abs = std::max(r.max_abs, c.max_abs), r.max_rel = std::max(r.max_rel, c.max_rel);
    if (c.status != Status::Pass && r.status == Status::Pass) {
      r.status = c.status;
      r.message = "grad of input " + std::to_string(i) + ": " + c.message;
    }
  }
  r.fallbacks = dev.fallbacks;
  if (r.status == Status::Pass && !dev.fallbacks.empty()) {
    r.status = Status::Fallback;
    r.message = "forward + backward of " + op.name() + " ran through a fallback on " + device.type_name() + ": " +
                quoted_list(dev.fallbacks) + " (" + dev.reasons + ")";
  }
}

}  // namespace loom::conformance
