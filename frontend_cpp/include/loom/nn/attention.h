// loom/nn/attention.h — MultiheadAttention with PyTorch's parameter layout
// (in_proj_weight [3E, E], in_proj_bias [3E], out_proj Linear), init and
// forward signature.
//
//   loom::nn::MultiheadAttention mha(loom::nn::MultiheadAttentionOptions(64, 8).batch_first(true));
//   auto [out, weights] = mha(x, x, x);   // x [N, L, E]
#pragma once

#include <loom/nn/linear.h>
#include <loom/nn/module.h>

#include <any>
#include <tuple>

namespace loom::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads) {}
  LOOM_ARG(int64_t, embed_dim);
  LOOM_ARG(int64_t, num_heads);
  // Dropout on the attention weights, in training mode.
  LOOM_ARG(double, dropout) = 0.0;
  LOOM_ARG(bool, bias) = true;
  // Inputs (N, L, E) rather than (L, N, E).
  LOOM_ARG(bool, batch_first) = false;
};

class MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  LOOM_CLONE_FROM_OPTIONS(MultiheadAttentionImpl)
  void reset_parameters();

  // query (L, N, E), key and value (S, N, E) — (N, L, E) with batch_first,
  // or unbatched (L, E). key_padding_mask (N, S): true (or -inf) ignores a
  // key. attn_mask (L, S) or (N * heads, L, S): a bool mask's true entries
  // are not attended to; a float mask is added to the scores. is_causal
  // (without attn_mask) lets position i attend to j <= i only. Returns
  // (output like query, weights (N, L, S) averaged over heads or
  // (N, heads, L, S); undefined unless need_weights).
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     bool is_causal = false);
  static std::vector<std::any> forward_default_args() {
    return {std::any(Tensor()), std::any(true), std::any(Tensor()), std::any(true), std::any(false)};
  }

  MultiheadAttentionOptions options;
  Tensor in_proj_weight;
  Tensor in_proj_bias;  // undefined without bias
  Linear out_proj{nullptr};
};
LOOM_MODULE(MultiheadAttention);

}  // namespace loom::nn
