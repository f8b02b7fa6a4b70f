// dropout.cpp — Dropout and Embedding (loom/nn/dropout.h).
#include <loom/autograd.h>
#include <loom/nn/dropout.h>
#include <loom/nn/init.h>
#include <loom/ops.h>

namespace loom::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& options_) : Module("Dropout"), options(options_) {
  LOOM_CHECK(options.p() >= 0.0 && options.p() <= 1.0,
             "Dropout: probability has to be between 0 and 1, but got ", options.p());
}

std::string DropoutImpl::extra_repr() const {
  return loom::detail::cat("p=", options.p(), ", inplace=False");
}

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options_) : Module("Embedding"), options(options_) {
  const int64_t n = options.num_embeddings();
  LOOM_CHECK(n > 0 && options.embedding_dim() > 0,
             "Embedding: num_embeddings and embedding_dim must be > 0");
  if (auto idx = options.padding_idx()) {
    LOOM_CHECK(*idx >= -n && *idx < n, "Embedding: padding_idx ", *idx,
               " must be within num_embeddings (", n, ")");
    if (*idx < 0) options.padding_idx(*idx + n);
  }
  weight = register_parameter("weight", loom::empty({n, options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (auto idx = options.padding_idx()) {
    autograd::NoGradGuard no_grad;
    weight.select(0, *idx).fill_(0.0);
  }
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return embedding(weight, indices, options.padding_idx());
}

std::string EmbeddingImpl::extra_repr() const {
  std::string s = loom::detail::cat(options.num_embeddings(), ", ", options.embedding_dim());
  if (auto idx = options.padding_idx()) s += loom::detail::cat(", padding_idx=", *idx);
  return s;
}

}  // namespace loom::nn
