// transformer.cpp — TransformerEncoderLayer (loom/nn/transformer.h).
#include <loom/nn/transformer.h>
#include <loom/ops.h>

namespace loom::nn {

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options_)
    : Module("TransformerEncoderLayer"), options(options_) {
  LOOM_CHECK(options.activation() == "relu" || options.activation() == "gelu",
             "TransformerEncoderLayer: activation should be relu or gelu, not '", options.activation(), "'");
  const int64_t d = options.d_model(), ff = options.dim_feedforward();
  // PyTorch's registration order, so state_dict keys come out the same.
  self_attn = register_module("self_attn", MultiheadAttention(MultiheadAttentionOptions(d, options.nhead())
                                                                  .dropout(options.dropout())
                                                                  .batch_first(options.batch_first())));
  linear1 = register_module("linear1", Linear(d, ff));
  dropout = register_module("dropout", Dropout(options.dropout()));
  linear2 = register_module("linear2", Linear(ff, d));
  const auto norm = LayerNormOptions({d}).eps(options.layer_norm_eps());
  norm1 = register_module("norm1", LayerNorm(norm));
  norm2 = register_module("norm2", LayerNorm(norm));
  dropout1 = register_module("dropout1", Dropout(options.dropout()));
  dropout2 = register_module("dropout2", Dropout(options.dropout()));
}

Tensor TransformerEncoderLayerImpl::self_attention_block(const Tensor& x, const Tensor& mask,
                                                         const Tensor& key_padding_mask, bool is_causal) {
  auto [out, weights] = self_attn(x, x, x, key_padding_mask, /*need_weights=*/false, mask,
                                  /*average_attn_weights=*/true, is_causal && !mask.defined());
  return dropout1(out);
}

Tensor TransformerEncoderLayerImpl::feed_forward_block(const Tensor& x) {
  Tensor h = linear1(x);
  h = options.activation() == "gelu" ? gelu(h) : relu(h);
  return dropout2(linear2(dropout(h)));
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
  Tensor x = src;
  if (options.norm_first()) {
    x = x + self_attention_block(norm1(x), src_mask, src_key_padding_mask, is_causal);
    return x + feed_forward_block(norm2(x));
  }
  x = norm1(x + self_attention_block(x, src_mask, src_key_padding_mask, is_causal));
  return norm2(x + feed_forward_block(x));
}

}  // namespace loom::nn
