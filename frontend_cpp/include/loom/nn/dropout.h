// loom/nn/dropout.h — Dropout, Dropout1d/2d/3d (active in training mode only)
// and Embedding.
#pragma once

#include <loom/nn/functional.h>
#include <loom/nn/module.h>
#include <loom/ops.h>

#include <optional>

namespace loom::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: Dropout(0.1)
  LOOM_ARG(double, p);
  // Accepted as libtorch's; Dropout computes out of place (see functional.h).
  LOOM_ARG(bool, inplace) = false;
};
using Dropout1dOptions = DropoutOptions;
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;

// Zeroes each element with probability p and scales the rest by 1/(1-p)
// while training; the identity in eval mode.
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  LOOM_CLONE_FROM_OPTIONS(DropoutImpl)
  Tensor forward(const Tensor& input) { return dropout(input, options.p(), is_training()); }
  std::string extra_repr() const override;

  DropoutOptions options;
};
LOOM_MODULE(Dropout);

namespace detail {
// Dropout1d/2d/3d: zero whole channels while training (functional::dropout<N>d).
template <int64_t BatchedDims>
class ChannelDropoutBase : public Module {
 public:
  Tensor forward(const Tensor& input) {
    return functional::feature_dropout(input, options.p(), is_training(), options.inplace(), BatchedDims, name().c_str());
  }
  std::string extra_repr() const override {
    return loom::detail::cat("p=", options.p(), options.inplace() ? ", inplace=True" : ", inplace=False");
  }
  DropoutOptions options;

 protected:
  ChannelDropoutBase(const char* type_name, const DropoutOptions& options) : Module(type_name), options(options) {
    LOOM_CHECK(options.p() >= 0.0 && options.p() <= 1.0, type_name,
               ": probability has to be between 0 and 1, but got ", options.p());
  }
};
}  // namespace detail

#define LOOM_DEFINE_CHANNEL_DROPOUT(Name, dims)                                                   \
  class Name##Impl : public detail::ChannelDropoutBase<dims> {                                    \
   public:                                                                                        \
    explicit Name##Impl(const DropoutOptions& options = {}) : ChannelDropoutBase(#Name, options) {} \
    LOOM_CLONE_FROM_OPTIONS(Name##Impl)                                                           \
  };                                                                                              \
  LOOM_MODULE(Name)
LOOM_DEFINE_CHANNEL_DROPOUT(Dropout1d, 3);
LOOM_DEFINE_CHANNEL_DROPOUT(Dropout2d, 4);
LOOM_DEFINE_CHANNEL_DROPOUT(Dropout3d, 5);
#undef LOOM_DEFINE_CHANNEL_DROPOUT

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
  LOOM_CLONE_FROM_OPTIONS(EmbeddingImpl)
  // indices: int64 or int32 of any shape -> indices.shape + [embedding_dim].
  Tensor forward(const Tensor& indices);
  void reset_parameters();
  std::string extra_repr() const override;

  EmbeddingOptions options;
  Tensor weight;
};
LOOM_MODULE(Embedding);

}  // namespace loom::nn
