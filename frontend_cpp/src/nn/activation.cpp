// activation.cpp — the activations that check their options (loom/nn/activation.h).
#include <loom/nn/activation.h>

namespace loom::nn {

GELUImpl::GELUImpl(const GELUOptions& options_) : Module("GELU"), options(options_) {
  LOOM_CHECK(options.approximate() == "none" || options.approximate() == "tanh",
             "GELU: approximate must be 'none' or 'tanh', got '", options.approximate(), "'");
}

}  // namespace loom::nn
