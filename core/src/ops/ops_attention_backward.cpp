// ops_attention_backward.cpp — the gradient of the fused attention as an op
// of its own, so a device can compute it natively (FlashAttention-2's
// backward: one pass over the scores, recomputed, never stored):
//
//   _scaled_dot_product_attention_backward(grad_out, q, k, v, attn_mask, output, logsumexp,
//                                          is_causal, scale) -> (grad_query, grad_key, grad_value)
//
// with P = exp(scale·q·kᵀ + mask − lse), D = rowsum(dO ∘ O),
// dS = P ∘ (dO·vᵀ − D): dq = scale·dS·k, dk = scale·dSᵀ·q, dv = Pᵀ·dO.
// The gradients have the full batch shape (the formula sums them down to
// broadcast operands). The op has no formula: autograd differentiates its
// composite (double backward), as for the conv2d gradient ops.
#include "attention.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <tuple>

namespace loom {

namespace detail::attention {

Probabilities probabilities(const Tensor& grad_out, const Operands& x, const Tensor& out, const Tensor& lse,
                            bool causal, double scale) {
  const DType c = x.q.dtype();
  Probabilities r;
  r.p = exp(masked_scores(x.q, x.k, x.mask_ptr(), causal, scale) - lse.to(c).unsqueeze(-1));
  if (grad_out.defined()) {
    const Tensor go = grad_out.to(c);
    const Tensor d = sum(go * out.to(c), IntArrayRef{-1}, true);
    r.ds = exclude(r.p * (matmul(go, x.v.transpose(-2, -1)) - d), x.q, x.k, x.mask_ptr(), causal, Scalar(0.0));
  }
  return r;
}

}  // namespace detail::attention

namespace {

namespace at = detail::attention;
using at::given;

constexpr const char* kBackward = "_scaled_dot_product_attention_backward";

// The argument positions.
enum : size_t { kGradOut = 0, kQuery = 1, kMask = 4, kOutput = 5, kLse = 6 };

// `t` (grad_out, output or logsumexp) must broadcast to `target` and be floating.
void check_row_operand(const Tensor& t, const char* what, IntArrayRef target) {
  LOOM_CHECK(is_floating_point(t.dtype()), kBackward, ": expected a floating ", what, ", got ", name(t.dtype()));
  LOOM_CHECK(at::broadcasts_to(t.sizes(), target), kBackward, ": ", what, " of shape ", shape_str(t.sizes()),
             " does not fit the forward's ", shape_str(target));
}

// Values: is_causal, scale. The kernel sees grad_out and output as
// [batch..., L, Ev] in q's dtype, logsumexp as [batch..., L] in
// compute_dtype(q) (casts where they differ), q, k, v and the mask as the
// fused op does; outputs are q's dtype, [batch..., L|S, E|Ev].
void prepare_backward(OpCall& call) {
  const Tensor &q = call.arg(kQuery), &k = call.arg(kQuery + 1), &v = call.arg(kQuery + 2);
  const DimVector batch = at::check_operands(kBackward, q, k, v, given(call.args[kMask]), call.values[0].u.i != 0);
  const int64_t L = q.size(-2), E = q.size(-1), S = k.size(-2), Ev = v.size(-1);
  const DimVector rows = at::with_dims(batch, L, Ev), lse_rows = at::with_dims(batch, L);
  check_row_operand(call.arg(kGradOut), "grad_out", rows);
  check_row_operand(call.arg(kOutput), "output", rows);
  check_row_operand(call.arg(kLse), "logsumexp", lse_rows);
  at::set_operands(call, kQuery, batch);
  set_input(call, kGradOut, q.dtype(), rows);
  set_input(call, kOutput, q.dtype(), rows);
  set_input(call, kLse, at::compute_dtype(q.dtype()), lse_rows);
  for (const DimVector& sizes : {at::with_dims(batch, L, E), at::with_dims(batch, S, E), at::with_dims(batch, S, Ev)}) {
    auto& plan = call.outputs.emplace_back();
    plan.dtype = q.dtype();
    plan.sizes = sizes;
  }
  call.compute_dtype = q.dtype();
}

void backward_composite(OpCall& call) {
  const Tensor& q = call.arg(kQuery);
  const IntArrayRef first = call.outputs[0].sizes;
  const IntArrayRef batch(first.data(), first.size() - 2);
  const DType c = at::compute_dtype(q.dtype());
  const Tensor &k = call.arg(kQuery + 1), &v = call.arg(kQuery + 2);
  const at::Operands x = at::operands(q, k, v, given(call.args[kMask]), batch, c);
  const Tensor go = at::expanded(call.arg(kGradOut), at::with_dims(batch, q.size(-2), v.size(-1)), c);
  const at::Probabilities pr =
      at::probabilities(go, x, call.arg(kOutput), call.arg(kLse), call.values[0].u.i != 0, call.values[1].u.f);
  const Tensor scale = full({}, call.values[1].u.f, c, q.device());
  call.result(0) = (matmul(pr.ds, x.k) * scale).to(q.dtype());
  call.result(1) = (matmul(pr.ds.transpose(-2, -1), x.q) * scale).to(q.dtype());
  call.result(2) = matmul(pr.p.transpose(-2, -1), go).to(q.dtype());
}

LOOM_CORE_OP(backward_op,
             "_scaled_dot_product_attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, "
             "Tensor? attn_mask, Tensor output, Tensor logsumexp, bool is_causal, float scale) "
             "-> (Tensor grad_query, Tensor grad_key, Tensor grad_value)",
             prepare_backward, backward_composite)

}  // namespace

std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_attention_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
    const Tensor& output, const Tensor& logsumexp, bool is_causal, double scale) {
  OpCall call(backward_op());
  for (const Tensor* t : {&grad_out, &query, &key, &value, &attn_mask, &output, &logsumexp}) call.args.push_back(t);
  call.values.push_back(detail::bool_value(is_causal));
  call.values.push_back(detail::float_value(scale));
  dispatch(call);
  return {std::move(call.outputs[0].result), std::move(call.outputs[1].result), std::move(call.outputs[2].result)};
}

}  // namespace loom
