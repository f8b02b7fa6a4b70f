// activation.cpp — the activations that check their options (loom/nn/activation.h).
#include <loom/nn/activation.h>

namespace loom::nn {

GELUImpl::GELUImpl(const GELUOptions& options_) : Module("GELU"), options(options_) {
  LOOM_CHECK(options.approximate() == "none" || options.approximate() == "tanh",
             "GELU: approximate must be 'none' or 'tanh', got '", options.approximate(), "'");
}

std::string LeakyReLUImpl::extra_repr() const {
  return loom::detail::cat("negative_slope=", options.negative_slope(), options.inplace() ? ", inplace=True" : "");
}

std::string ELUImpl::extra_repr() const {
  return loom::detail::cat("alpha=", options.alpha(), options.inplace() ? ", inplace=True" : "");
}

std::string SoftplusImpl::extra_repr() const {
  return loom::detail::cat("beta=", options.beta(), ", threshold=", options.threshold());
}

}  // namespace loom::nn
