// activation.cpp — the activations that check their options (loom/nn/activation.h).
#include <loom/nn/activation.h>

namespace loom::nn {

GELUImpl::GELUImpl(const GELUOptions& options_) : Module("GELU"), options(options_) {
  LOOM_CHECK(options.approximate() == "none" || options.approximate() == "tanh",
             "GELU: approximate must be 'none' or 'tanh', got '", options.approximate(), "'");
}

HardtanhImpl::HardtanhImpl(const HardtanhOptions& options_) : Module("Hardtanh"), options(options_) {
  LOOM_CHECK(options.max_val() > options.min_val(), "Hardtanh: max_val (", options.max_val(),
             ") must be greater than min_val (", options.min_val(), ")");
}

std::string HardtanhImpl::extra_repr() const {
  return loom::detail::cat("min_val=", options.min_val(), ", max_val=", options.max_val(),
                           options.inplace() ? ", inplace=True" : "");
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
