// ops_nn.cpp — softmax, log_softmax (CPU kernels, plus a composite for
// devices without one) and scaled_dot_product_attention (composite). What a
// softmax kernel sees is docs/kernel_conventions.md, "Nn".
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <cmath>
#include <limits>

namespace loom {
namespace {

// softmax(self, dim, dtype): the kernel gets the input already in the
// result dtype, values[0] the dim wrapped to [0, ndim), and a 0-d tensor as
// a one-element 1-d one.
void prepare_softmax(OpCall& call) {
  const Tensor& self = call.arg(0);
  const std::string& op = call.op->name();
  const int64_t dim = wrap_dim(op, call.values[0].u.i, self.dim());
  const DType out = call.values[1].kind == LOOM_VALUE_DTYPE ? static_cast<DType>(call.values[1].u.i)
                                                             : self.dtype();
  LOOM_CHECK(is_floating_point(out), op, ": expected a floating point input (or a floating dtype argument), got ",
             name(out));
  call.values[0].u.i = self.dim() == 0 ? 0 : dim;
  call.inputs.resize(1);
  set_input(call, 0, out, self.sizes());
  call.compute_dtype = out;
  auto& plan = call.outputs.emplace_back();
  plan.dtype = out;
  plan.sizes = DimVector(self.sizes());
  if (self.dim() == 0) {
    const int64_t one = 1;
    call.inputs[0].view = call.make_view(IntArrayRef(&one, 1), IntArrayRef(&one, 1));
    plan.kernel_view = call.make_view(IntArrayRef(&one, 1), IntArrayRef(&one, 1));
  }
}

// The composite, for devices with no kernel: max-shifted, from other ops,
// in float32 for the 16-bit floats (as the kernels compute).
template <bool Log>
void softmax_composite(OpCall& call) {
  const int64_t dim = call.values[0].u.i;
  const DType out = call.outputs[0].dtype;
  const DType compute = out == DType::Float16 || out == DType::BFloat16 ? DType::Float32 : out;
  const Tensor x = call.arg(0).to(compute);
  const Tensor shifted = x.dim() == 0 ? x - x : x - amax(x, IntArrayRef{dim}, true);
  if constexpr (Log) {
    call.result() = (shifted - log(sum(exp(shifted), IntArrayRef{dim}, true))).to(out);
  } else {
    const Tensor e = exp(shifted);
    call.result() = (e / sum(e, IntArrayRef{dim}, true)).to(out);
  }
}

LOOM_CORE_OP(softmax_op, "softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
             prepare_softmax, softmax_composite<false>)
LOOM_CORE_OP(log_softmax_op, "log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
             prepare_softmax, softmax_composite<true>)

// The fused backwards, from the saved output y (a 0-d softmax is constant:
// no gradient). softmax: y (g - Σ g y); log_softmax: g - exp(y) Σ g.
int64_t softmax_dim(const autograd::BackwardContext& c) {
  const int64_t d = c.int_arg(0);
  return d < 0 ? d + static_cast<int64_t>(c.input_sizes(0).size()) : d;
}

LOOM_DERIVATIVE(softmax_op, "SoftmaxBackward0", autograd::none(), autograd::outputs(0),
                [](autograd::BackwardContext& c) {
                  if (c.input_sizes(0).empty()) return;
                  const Tensor y = c.output(0), g = c.grad();
                  c.set(0, y * (g - sum(g * y, IntArrayRef{softmax_dim(c)}, true)));
                })
LOOM_DERIVATIVE(log_softmax_op, "LogSoftmaxBackward0", autograd::none(), autograd::outputs(0),
                [](autograd::BackwardContext& c) {
                  if (c.input_sizes(0).empty()) return;
                  const Tensor g = c.grad();
                  c.set(0, g - exp(c.output(0)) * sum(g, IntArrayRef{softmax_dim(c)}, true));
                })

// ------------------------------------------------------------- attention ---

constexpr const char* kSdpa = "scaled_dot_product_attention";

// Checks shapes and dtypes; the one output is [batch..., L, Ev].
void prepare_sdpa(OpCall& call) {
  const Tensor &q = call.arg(0), &k = call.arg(1), &v = call.arg(2);
  const Tensor* mask = call.args[3];
  LOOM_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, kSdpa,
             ": query, key and value need at least 2 dims ([..., L, E]), got ", q.dim(), "-d, ",
             k.dim(), "-d and ", v.dim(), "-d");
  LOOM_CHECK(is_floating_point(q.dtype()), kSdpa, ": expected floating point query, got ", name(q.dtype()));
  LOOM_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), kSdpa,
             ": expected query, key and value of the same dtype, got ", name(q.dtype()), ", ",
             name(k.dtype()), " and ", name(v.dtype()));
  const int64_t L = q.size(-2), E = q.size(-1), S = k.size(-2);
  LOOM_CHECK(k.size(-1) == E, kSdpa, ": query and key must have the same embedding size (last dim), got ",
             shape_str(q.sizes()), " and ", shape_str(k.sizes()));
  LOOM_CHECK(v.size(-2) == S, kSdpa, ": key and value must have the same sequence length (dim -2), got ",
             shape_str(k.sizes()), " and ", shape_str(v.sizes()));
  auto lead = [](const Tensor& t) { return IntArrayRef(t.sizes().data(), static_cast<size_t>(t.dim() - 2)); };
  DimVector batch = broadcast_shapes(kSdpa, lead(q), lead(k));
  batch = broadcast_shapes(kSdpa, batch, lead(v));
  const double p = call.values[0].u.f;
  LOOM_CHECK(p >= 0 && p <= 1, kSdpa, ": dropout_p must be in [0, 1], got ", p);
  if (mask && mask->defined()) {
    LOOM_CHECK(call.values[1].u.i == 0, kSdpa, ": attn_mask must not be given when is_causal is true");
    LOOM_CHECK(mask->dtype() == DType::Bool || mask->dtype() == q.dtype(), kSdpa,
               ": attn_mask must be bool or of the query's dtype ", name(q.dtype()), ", got ",
               name(mask->dtype()));
    DimVector scores(batch);
    scores.push_back(L);
    scores.push_back(S);
    const IntArrayRef ms = mask->sizes();
    bool fits = ms.size() <= scores.size();
    for (size_t i = 0; fits && i < ms.size(); ++i) {
      const int64_t want = scores[scores.size() - ms.size() + i];
      fits = ms[i] == want || ms[i] == 1;
    }
    LOOM_CHECK(fits, kSdpa, ": attn_mask of shape ", shape_str(ms), " does not broadcast to the scores' shape ",
               shape_str(scores), " ([batch..., L, S])");
  }
  if (call.values[2].kind != LOOM_VALUE_NONE)
    LOOM_CHECK(std::isfinite(call.values[2].u.f), kSdpa, ": scale must be finite, got ", call.values[2].u.f);
  auto& plan = call.outputs.emplace_back();
  plan.dtype = q.dtype();
  plan.sizes = batch;
  plan.sizes.push_back(L);
  plan.sizes.push_back(v.size(-1));
  call.compute_dtype = q.dtype();
}

void sdpa_composite(OpCall& call) {
  const Tensor &q = call.arg(0), &k = call.arg(1), &v = call.arg(2);
  const double p = call.values[0].u.f;
  const bool causal = call.values[1].u.i != 0;
  const double scale = call.values[2].kind == LOOM_VALUE_NONE
                           ? 1.0 / std::sqrt(static_cast<double>(q.size(-1)))
                           : call.values[2].u.f;
  const Scalar neg_inf(-std::numeric_limits<double>::infinity());
  // Numbers enter as 0-d tensors of the query's dtype: a loom Scalar
  // becomes a float32 tensor and would round a float64 scale.
  const auto num = [&](double x) { return full({}, x, q.dtype(), q.device()); };
  Tensor scores = matmul(q, k.transpose(-2, -1)) * num(scale);
  if (causal) {  // keep j <= i: the top-left-aligned lower triangle
    const Device dev = q.device();
    const Tensor i = arange(q.size(-2), DType::Int64, dev).unsqueeze(1);
    const Tensor j = arange(k.size(-2), DType::Int64, dev).unsqueeze(0);
    scores = where(j <= i, scores, neg_inf);
  }
  if (const Tensor* mask = call.args[3]; mask && mask->defined()) {
    scores = mask->dtype() == DType::Bool ? where(*mask, scores, neg_inf) : scores + *mask;
  }
  Tensor attn = softmax(scores, -1);
  if (p > 0) {
    const Tensor keep = rand(attn.sizes(), attn.dtype(), attn.device()) >= Scalar(p);
    attn = p >= 1 ? zeros_like(attn) : where(keep, attn * num(1.0 / (1.0 - p)), Scalar(0.0));
  }
  call.result() = matmul(attn, v);
}

LOOM_CORE_OP(sdpa_op,
             "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
             "float dropout_p=0.0, bool is_causal=False, *, float? scale=None) -> Tensor",
             prepare_sdpa, sdpa_composite)

LoomValue int_value(int64_t i) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT;
  v.u.i = i;
  return v;
}

}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return detail::run_op(softmax_op(), {&self}, {int_value(dim), detail::dtype_value(dtype)});
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return detail::run_op(log_softmax_op(), {&self}, {int_value(dim), detail::dtype_value(dtype)});
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  return detail::run_op(sdpa_op(), {&query, &key, &value, &attn_mask},
                        {detail::float_value(dropout_p), detail::bool_value(is_causal),
                         scale ? detail::float_value(*scale) : detail::none_value()});
}

}  // namespace loom
