// attention.cpp — MultiheadAttention (loom/nn/attention.h), following
// torch.nn.functional.multi_head_attention_forward.
#include <loom/nn/attention.h>
#include <loom/nn/init.h>
#include <loom/ops.h>

#include <cmath>
#include <limits>

#include "layer_util.h"

namespace loom::nn {

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options_)
    : Module("MultiheadAttention"), options(options_) {
  const int64_t e = options.embed_dim(), h = options.num_heads();
  LOOM_CHECK(e > 0 && h > 0, "MultiheadAttention: embed_dim and num_heads must be > 0, got ", e,
             " and ", h);
  LOOM_CHECK(e % h == 0, "MultiheadAttention: embed_dim (", e, ") must be divisible by num_heads (",
             h, ")");
  LOOM_CHECK(options.dropout() >= 0.0 && options.dropout() <= 1.0,
             "MultiheadAttention: dropout must be in [0, 1], got ", options.dropout());
  in_proj_weight = register_parameter("in_proj_weight", loom::empty({3 * e, e}));
  if (options.bias()) in_proj_bias = register_parameter("in_proj_bias", loom::empty({3 * e}));
  out_proj = register_module("out_proj", Linear(LinearOptions(e, e).bias(options.bias())));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
}

namespace {
// A mask as something to add to the scores: bool true -> -inf.
Tensor additive_mask(const Tensor& mask, DType dtype) {
  if (!mask.defined() || mask.dtype() != DType::Bool) return mask.defined() ? mask.to(dtype) : mask;
  return loom::zeros(mask.sizes(), dtype, mask.device())
      .masked_fill(mask, -std::numeric_limits<double>::infinity());
}
}  // namespace

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query_in, const Tensor& key_in,
                                                           const Tensor& value_in,
                                                           const Tensor& key_padding_mask,
                                                           bool need_weights, const Tensor& attn_mask,
                                                           bool average_attn_weights, bool is_causal) {
  const int64_t e = options.embed_dim(), heads = options.num_heads(), head_dim = e / heads;
  LOOM_CHECK(query_in.dim() == 2 || query_in.dim() == 3,
             "MultiheadAttention: query should be unbatched 2D or batched 3D, got ", query_in.dim(), "D");
  LOOM_CHECK(key_in.dim() == query_in.dim() && value_in.dim() == query_in.dim(),
             "MultiheadAttention: query, key and value must have the same number of dims");
  const bool unbatched = query_in.dim() == 2;
  // To the sequence-first layout (L, N, E).
  auto seq_first = [&](const Tensor& t) {
    if (unbatched) return t.unsqueeze(1);
    return options.batch_first() ? t.transpose(0, 1) : t;
  };
  const Tensor query = seq_first(query_in), key = seq_first(key_in), value = seq_first(value_in);
  const int64_t tgt_len = query.size(0), batch = query.size(1), src_len = key.size(0);
  LOOM_CHECK(query.size(2) == e && key.size(2) == e && value.size(2) == e,
             "MultiheadAttention: expected embedding dim ", e, ", got query ",
             shape_str(query_in.sizes()), ", key ", shape_str(key_in.sizes()), ", value ",
             shape_str(value_in.sizes()));
  LOOM_CHECK(value.size(0) == src_len && key.size(1) == batch && value.size(1) == batch,
             "MultiheadAttention: key and value must have the same length and batch as each other "
             "and the query's batch");

  const auto w = chunk(in_proj_weight, 3, 0);
  std::vector<Tensor> b(3);
  if (in_proj_bias.defined()) b = chunk(in_proj_bias, 3, 0);
  auto project = [&](const Tensor& x, int i, int64_t len) {
    // (len, N, E) -> (N, heads, len, head_dim)
    return linear(x, w[i], detail::optional_bias(b[i]))
        .reshape({len, batch, heads, head_dim})
        .permute({1, 2, 0, 3});
  };
  const Tensor q = project(query, 0, tgt_len), k = project(key, 1, src_len),
               v = project(value, 2, src_len);

  Tensor mask = attn_mask;
  if (is_causal && !mask.defined())
    mask = triu(loom::ones({tgt_len, src_len}, DType::Bool, query.device()), 1);
  mask = additive_mask(mask, q.dtype());
  if (mask.defined() && mask.dim() == 3) mask = mask.reshape({batch, heads, tgt_len, src_len});
  if (key_padding_mask.defined()) {
    Tensor kpm = additive_mask(unbatched ? key_padding_mask.unsqueeze(0) : key_padding_mask, q.dtype());
    LOOM_CHECK(kpm.dim() == 2 && kpm.size(0) == batch && kpm.size(1) == src_len,
               "MultiheadAttention: key_padding_mask must be (N, S) = (", batch, ", ", src_len,
               "), got ", shape_str(key_padding_mask.sizes()));
    kpm = kpm.reshape({batch, 1, 1, src_len});
    mask = mask.defined() ? mask + kpm : kpm;
  }
  const double dropout_p = is_training() ? options.dropout() : 0.0;

  Tensor out, weights;
  if (need_weights) {
    Tensor scores = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(head_dim)));
    if (mask.defined()) scores = scores + mask;
    weights = softmax(scores, -1);
    out = (dropout_p > 0.0 ? dropout(weights, dropout_p) : weights).matmul(v);
  } else {
    out = scaled_dot_product_attention(q, k, v, mask, dropout_p);
  }
  out = out.permute({2, 0, 1, 3}).reshape({tgt_len, batch, e});
  out = out_proj(out);
  if (weights.defined() && average_attn_weights) weights = weights.mean({1});
  if (unbatched) {
    out = out.squeeze(1);
    if (weights.defined()) weights = weights.squeeze(0);
  } else if (options.batch_first()) {
    out = out.transpose(0, 1);
  }
  return {out, weights};
}

}  // namespace loom::nn
