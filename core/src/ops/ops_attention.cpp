// ops_attention.cpp — scaled_dot_product_attention and the fused op it runs.
//
//   scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale)
//     the public op (torch.nn.functional's), a composite. Without dropout,
//     on a device with a kernel for the fused op,
//     and unless a float mask needs a gradient, it is one call of
//   _scaled_dot_product_attention_fused(q, k, v, attn_mask, is_causal, scale)
//       -> (output, logsumexp)
//     which a device can run as one kernel that never writes the L x S
//     scores (FlashAttention); its derivative is the op
//     _scaled_dot_product_attention_backward (ops_attention_backward.cpp),
//     which recomputes the probabilities from the saved logsumexp.
//   Otherwise the public op decomposes: matmul, mask, softmax, dropout,
//   matmul, differentiated op by op.
//
// Both paths give a row whose every key is masked NaN (softmax of only −inf
// is 0/0; the fused form computes exp(−inf − lse) with lse = −inf), and a
// row over zero keys (S = 0) zeros. What a kernel sees is
// docs/kernel_conventions.md, "Nn".
#include "attention.h"
#include "autograd/formula.h"
#include "core_op.h"
#include "opmath.h"

#include <loom/autograd.h>
#include <loom/error.h>
#include <loom/ops.h>

#include <cmath>
#include <limits>
#include <tuple>

namespace loom {

namespace detail::attention {

DType compute_dtype(DType t) { return opmath_dtype(t); }

namespace {
IntArrayRef lead(const Tensor& t) { return IntArrayRef(t.sizes().data(), static_cast<size_t>(t.dim() - 2)); }
}  // namespace

bool broadcasts_to(IntArrayRef sizes, IntArrayRef target) {
  if (sizes.size() > target.size()) return false;
  const size_t lead = target.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] != target[lead + i] && sizes[i] != 1) return false;
  return true;
}

DimVector with_dims(IntArrayRef batch, int64_t a) {
  DimVector r(batch);
  r.push_back(a);
  return r;
}
DimVector with_dims(IntArrayRef batch, int64_t a, int64_t b) {
  DimVector r = with_dims(batch, a);
  r.push_back(b);
  return r;
}

DimVector check_operands(std::string_view op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                         bool causal) {
  LOOM_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, op,
             ": query, key and value need at least 2 dims ([..., L, E]), got ", q.dim(), "-d, ", k.dim(), "-d and ",
             v.dim(), "-d");
  LOOM_CHECK(is_floating_point(q.dtype()), op, ": expected floating point query, got ", name(q.dtype()));
  LOOM_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), op,
             ": expected query, key and value of the same dtype, got ", name(q.dtype()), ", ", name(k.dtype()),
             " and ", name(v.dtype()));
  const int64_t L = q.size(-2), E = q.size(-1), S = k.size(-2);
  LOOM_CHECK(k.size(-1) == E, op, ": query and key must have the same embedding size (last dim), got ",
             shape_str(q.sizes()), " and ", shape_str(k.sizes()));
  LOOM_CHECK(v.size(-2) == S, op, ": key and value must have the same sequence length (dim -2), got ",
             shape_str(k.sizes()), " and ", shape_str(v.sizes()));
  DimVector batch = broadcast_shapes(op, lead(q), lead(k));
  batch = broadcast_shapes(op, batch, lead(v));
  if (!mask) return batch;
  LOOM_CHECK(!causal, op, ": attn_mask must not be given when is_causal is true");
  LOOM_CHECK(mask->dtype() == DType::Bool || mask->dtype() == q.dtype(), op,
             ": attn_mask must be bool or of the query's dtype ", name(q.dtype()), ", got ", name(mask->dtype()));
  const DimVector scores = with_dims(batch, L, S);
  LOOM_CHECK(broadcasts_to(mask->sizes(), scores), op, ": attn_mask of shape ", shape_str(mask->sizes()),
             " does not broadcast to the scores' shape ", shape_str(scores), " ([batch..., L, S])");
  return batch;
}

void set_operands(OpCall& call, size_t first, IntArrayRef batch) {
  const Tensor &q = *call.args[first], &k = *call.args[first + 1], &v = *call.args[first + 2];
  const int64_t L = q.size(-2), E = q.size(-1), S = k.size(-2), Ev = v.size(-1);
  set_input(call, first, q.dtype(), with_dims(batch, L, E));
  set_input(call, first + 1, q.dtype(), with_dims(batch, S, E));
  set_input(call, first + 2, q.dtype(), with_dims(batch, S, Ev));
  const Tensor* mask = given(call.args[first + 3]);
  set_input(call, first + 3, mask ? mask->dtype() : q.dtype(), with_dims(batch, L, S));
}

Tensor exclude(const Tensor& t, const Tensor& q, const Tensor& k, const Tensor* mask, bool causal, Scalar fill) {
  Tensor r = t;
  if (causal) {  // keep j <= i: the top-left-aligned lower triangle
    const Device dev = q.device();
    const Tensor i = arange(q.size(-2), DType::Int64, dev).unsqueeze(1);
    const Tensor j = arange(k.size(-2), DType::Int64, dev).unsqueeze(0);
    r = where(j <= i, r, fill);
  }
  if (mask && mask->dtype() == DType::Bool) r = where(*mask, r, fill);
  return r;
}

Tensor masked_scores(const Tensor& q, const Tensor& k, const Tensor* mask, bool causal, double scale) {
  // The scale enters as a 0-d tensor of q's dtype: a loom Scalar becomes a
  // float32 tensor and would round a float64 scale.
  const Tensor scores = exclude(matmul(q, k.transpose(-2, -1)) * full({}, scale, q.dtype(), q.device()), q, k, mask,
                                causal, Scalar(-std::numeric_limits<double>::infinity()));
  return mask && mask->dtype() != DType::Bool ? scores + *mask : scores;
}

Tensor expanded(const Tensor& t, IntArrayRef shape, DType dtype) {
  const Tensor e = t.expand(shape);
  return e.dtype() == dtype || e.dtype() == DType::Bool ? e : e.to(dtype);
}

Operands operands(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, IntArrayRef batch,
                  DType dtype) {
  const int64_t L = q.size(-2), S = k.size(-2);
  return {expanded(q, with_dims(batch, L, q.size(-1)), dtype), expanded(k, with_dims(batch, S, k.size(-1)), dtype),
          expanded(v, with_dims(batch, S, v.size(-1)), dtype),
          mask ? expanded(*mask, with_dims(batch, L, S), dtype) : Tensor()};
}

}  // namespace detail::attention

namespace {

namespace at = detail::attention;
using at::given;

// ------------------------------------------------------------ fused op ---

constexpr const char* kFused = "_scaled_dot_product_attention_fused";

// Values: is_causal, scale. Outputs: [batch..., L, Ev] in q's dtype and the
// rows' logsumexp [batch..., L] in compute_dtype(q). The kernel sees every
// operand with the full batch shape (at::set_operands).
void prepare_fused(OpCall& call) {
  const Tensor &q = call.arg(0), &k = call.arg(1), &v = call.arg(2);
  const DimVector batch = at::check_operands(kFused, q, k, v, given(call.args[3]), call.values[0].u.i != 0);
  at::set_operands(call, 0, batch);
  auto& out = call.outputs.emplace_back();
  out.dtype = q.dtype();
  out.sizes = at::with_dims(batch, q.size(-2), v.size(-1));
  auto& lse = call.outputs.emplace_back();
  lse.dtype = at::compute_dtype(q.dtype());
  lse.sizes = at::with_dims(batch, q.size(-2));
  call.compute_dtype = q.dtype();
}

// The same math a kernel does, with ops, in compute_dtype: the scores,
// their logsumexp per row, softmax(scores)·v.
void fused_composite(OpCall& call) {
  const Tensor& q = call.arg(0);
  const IntArrayRef out_sizes = call.outputs[0].sizes;
  const IntArrayRef batch(out_sizes.data(), out_sizes.size() - 2);
  const at::Operands x =
      at::operands(q, call.arg(1), call.arg(2), given(call.args[3]), batch, at::compute_dtype(q.dtype()));
  const Tensor scores = at::masked_scores(x.q, x.k, x.mask_ptr(), call.values[0].u.i != 0, call.values[1].u.f);
  // softmax(scores) is exp(scores − lse) in one pass (NaN for a row of −inf).
  call.result(0) = matmul(softmax(scores, -1), x.v).to(q.dtype());
  call.result(1) = logsumexp(scores, IntArrayRef{-1});
}

LOOM_CORE_OP(fused_op,
             "_scaled_dot_product_attention_fused(Tensor query, Tensor key, Tensor value, Tensor? attn_mask, "
             "bool is_causal, float scale) -> (Tensor output, Tensor logsumexp)",
             prepare_fused, fused_composite)

Tensor add_defined(const Tensor& a, const Tensor& b) { return a.defined() ? a + b : b; }

// Gradients of q, k, v from the output's gradient come from the backward
// op (a device kernel where there is one). Two rarer terms are composites:
// the logsumexp's own gradient (only double backward sends one: the
// backward op reads lse) adds P ∘ g_lse to the scores' gradient, and a
// float mask that requires grad gets the scores' gradient dS itself.
LOOM_DERIVATIVE(fused_op, "ScaledDotProductAttentionBackward0", autograd::inputs(0, 1, 2, 3),
                autograd::outputs(0, 1), [](autograd::BackwardContext& c) {
                  const bool causal = c.bool_arg(0);
                  const double scale = c.float_arg(1);
                  const Tensor q = c.input(0), k = c.input(1), v = c.input(2);
                  const Tensor mask = c.has_input(3) ? c.input(3) : Tensor();
                  const Tensor out = c.output(0), lse = c.output(1);
                  Tensor gq, gk, gv;
                  if (c.has_grad(0))
                    std::tie(gq, gk, gv) =
                        scaled_dot_product_attention_backward(c.grad(0), q, k, v, mask, out, lse, causal, scale);
                  const bool mask_grad = mask.defined() && c.needs_grad(3);
                  if (c.has_grad(1) || mask_grad) {
                    const IntArrayRef out_sizes = c.output_sizes(0);
                    const IntArrayRef batch(out_sizes.data(), out_sizes.size() - 2);
                    const DType ct = at::compute_dtype(q.dtype());
                    const at::Operands x = at::operands(q, k, v, given(&mask), batch, ct);
                    const Tensor go = mask_grad && c.has_grad(0) ? c.grad(0) : Tensor();
                    at::Probabilities pr = at::probabilities(go, x, out, lse, causal, scale);
                    if (c.has_grad(1)) {
                      const Tensor dl = pr.p * c.grad(1).to(ct).unsqueeze(-1);
                      const Tensor sc = full({}, scale, ct, q.device());
                      gq = add_defined(gq, matmul(dl, x.k) * sc);
                      gk = add_defined(gk, matmul(dl.transpose(-2, -1), x.q) * sc);
                      pr.ds = add_defined(pr.ds, dl);
                    }
                    if (mask_grad) c.set(3, pr.ds);
                  }
                  if (gq.defined()) c.set(0, gq);
                  if (gk.defined()) c.set(1, gk);
                  if (gv.defined()) c.set(2, gv);
                })

// ---------------------------------------------------------- public op ---

constexpr const char* kSdpa = "scaled_dot_product_attention";

// Checks shapes and dtypes; the one output is [batch..., L, Ev].
void prepare_sdpa(OpCall& call) {
  const Tensor &q = call.arg(0), &k = call.arg(1), &v = call.arg(2);
  const DimVector batch = at::check_operands(kSdpa, q, k, v, given(call.args[3]), call.values[1].u.i != 0);
  const double p = call.values[0].u.f;
  LOOM_CHECK(p >= 0 && p <= 1, kSdpa, ": dropout_p must be in [0, 1], got ", p);
  if (call.values[2].kind != LOOM_VALUE_NONE)
    LOOM_CHECK(std::isfinite(call.values[2].u.f), kSdpa, ": scale must be finite, got ", call.values[2].u.f);
  auto& plan = call.outputs.emplace_back();
  plan.dtype = q.dtype();
  plan.sizes = at::with_dims(batch, q.size(-2), v.size(-1));
  call.compute_dtype = q.dtype();
}

void sdpa_composite(OpCall& call) {
  const Tensor &q = call.arg(0), &k = call.arg(1), &v = call.arg(2);
  const Tensor* mask = given(call.args[3]);
  const double p = call.values[0].u.f;
  const bool causal = call.values[1].u.i != 0;
  const double scale = call.values[2].kind == LOOM_VALUE_NONE ? 1.0 / std::sqrt(static_cast<double>(q.size(-1)))
                                                              : call.values[2].u.f;
  // The fused op cannot give a float mask its gradient cheaply (it would
  // need the whole scores' gradient), and has no dropout. Its composite is
  // slower than the decomposed path (exp and logsumexp instead of one
  // softmax), so only a device with a kernel for it, for q's dtype, takes it
  // (the CPU's: float32 and float64).
  const bool mask_needs_grad =
      mask && mask->dtype() != DType::Bool && mask->requires_grad() && autograd::GradMode::is_enabled();
  const KernelEntry* fused_kernel = fused_op().kernel(q.device().type);
  if (p == 0 && !mask_needs_grad && fused_kernel && fused_kernel->accepts(static_cast<int>(q.dtype()))) {
    call.result() = std::get<0>(scaled_dot_product_attention_fused(q, k, v, mask ? *mask : Tensor(), causal, scale));
    return;
  }
  Tensor attn = softmax(at::masked_scores(q, k, mask, causal, scale), -1);
  if (p > 0) {
    const Tensor keep = rand(attn.sizes(), attn.dtype(), attn.device()) >= Scalar(p);
    attn = p >= 1 ? zeros_like(attn)
                  : where(keep, attn * full({}, 1.0 / (1.0 - p), q.dtype(), q.device()), Scalar(0.0));
  }
  call.result() = matmul(attn, v);
}

LOOM_CORE_OP(sdpa_op,
             "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
             "float dropout_p=0.0, bool is_causal=False, *, float? scale=None) -> Tensor",
             prepare_sdpa, sdpa_composite)

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  return detail::run_op(sdpa_op(), {&query, &key, &value, &attn_mask},
                        {detail::float_value(dropout_p), detail::bool_value(is_causal),
                         scale ? detail::float_value(*scale) : detail::none_value()});
}

std::tuple<Tensor, Tensor> scaled_dot_product_attention_fused(const Tensor& query, const Tensor& key,
                                                              const Tensor& value, const Tensor& attn_mask,
                                                              bool is_causal, double scale) {
  OpCall call(fused_op());
  for (const Tensor* t : {&query, &key, &value, &attn_mask}) call.args.push_back(t);
  call.values.push_back(detail::bool_value(is_causal));
  call.values.push_back(detail::float_value(scale));
  dispatch(call);
  return {std::move(call.outputs[0].result), std::move(call.outputs[1].result)};
}

}  // namespace loom
