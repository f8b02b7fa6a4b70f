// loom/nn/dropout.h — Dropout (active in training mode only) and Embedding.
#pragma once

#include <loom/nn/module.h>
#include <loom/ops.h>

#include <optional>

namespace loom::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: Dropout(0.1)
  LOOM_ARG(double, p);
};

// Zeroes each element with probability p and scales the rest by 1/(1-p)
// while training; the identity in eval mode.
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  Tensor forward(const Tensor& input) { return dropout(input, options.p(), is_training()); }
  std::string extra_repr() const override;

  DropoutOptions options;
};
LOOM_MODULE(Dropout);

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  LOOM_ARG(int64_t, num_embeddings);
  LOOM_ARG(int64_t, embedding_dim);
  // This row starts at zero and gets no gradient (negative counts from the end).
  LOOM_ARG(std::optional<int64_t>, padding_idx);
};

// A lookup table weight [num_embeddings, embedding_dim], initialised N(0, 1).
class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  // indices: int64 or int32 of any shape -> indices.shape + [embedding_dim].
  Tensor forward(const Tensor& indices);
  void reset_parameters();
  std::string extra_repr() const override;

  EmbeddingOptions options;
  Tensor weight;
};
LOOM_MODULE(Embedding);

}  // namespace loom::nn
