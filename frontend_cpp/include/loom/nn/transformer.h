// loom/nn/transformer.h — TransformerEncoderLayer: self-attention and a
// feed-forward block, each with dropout, a residual and LayerNorm (after
// each block, or before it with norm_first), as PyTorch's.
#pragma once

#include <loom/nn/attention.h>
#include <loom/nn/dropout.h>
#include <loom/nn/linear.h>
#include <loom/nn/normalization.h>

#include <any>

namespace loom::nn {

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  LOOM_ARG(int64_t, d_model);
  LOOM_ARG(int64_t, nhead);
  LOOM_ARG(int64_t, dim_feedforward) = 2048;
  LOOM_ARG(double, dropout) = 0.1;
  // "relu" or "gelu".
  LOOM_ARG(std::string, activation) = "relu";
  LOOM_ARG(double, layer_norm_eps) = 1e-5;
  LOOM_ARG(bool, batch_first) = false;
  LOOM_ARG(bool, norm_first) = false;
};

class TransformerEncoderLayerImpl : public Module {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  LOOM_CLONE_FROM_OPTIONS(TransformerEncoderLayerImpl)
  // src (S, N, E), or (N, S, E) with batch_first, or unbatched (S, E);
  // masks as MultiheadAttention's.
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {}, bool is_causal = false);
  static std::vector<std::any> forward_default_args() { return {std::any(Tensor()), std::any(Tensor()), std::any(false)}; }

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr}, linear2{nullptr};
  Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr};

 private:
  Tensor self_attention_block(const Tensor& x, const Tensor& mask, const Tensor& key_padding_mask,
                              bool is_causal);
  Tensor feed_forward_block(const Tensor& x);
};
LOOM_MODULE(TransformerEncoderLayer);

}  // namespace loom::nn
