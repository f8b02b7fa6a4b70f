// loom/nn/activation.h — elementwise activations and (log-)softmax as
// modules: ReLU, GELU, SiLU, Sigmoid, Tanh, Softmax, LogSoftmax.
#pragma once

#include <loom/nn/module.h>
#include <loom/ops.h>

namespace loom::nn {

#define LOOM_DEFINE_ACTIVATION(Name, fn)                              \
  class Name##Impl : public Module {                                  \
   public:                                                            \
    Name##Impl() : Module(#Name) {}                                   \
    Tensor forward(const Tensor& input) { return loom::fn(input); }   \
  };                                                                  \
  LOOM_MODULE(Name)

LOOM_DEFINE_ACTIVATION(ReLU, relu);
LOOM_DEFINE_ACTIVATION(SiLU, silu);
LOOM_DEFINE_ACTIVATION(Sigmoid, sigmoid);
LOOM_DEFINE_ACTIVATION(Tanh, tanh);
#undef LOOM_DEFINE_ACTIVATION

struct GELUOptions {
  // "none" (the exact erf form) or "tanh" (the approximation).
  LOOM_ARG(std::string, approximate) = "none";
};

class GELUImpl : public Module {
 public:
  explicit GELUImpl(const GELUOptions& options = {});
  Tensor forward(const Tensor& input) { return loom::gelu(input, options.approximate()); }
  std::string extra_repr() const override { return "approximate='" + options.approximate() + "'"; }

  GELUOptions options;
};
LOOM_MODULE(GELU);

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: Softmax(1) reads well
  LOOM_ARG(int64_t, dim);
};

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Module("Softmax"), options(options) {}
  Tensor forward(const Tensor& input) { return loom::softmax(input, options.dim()); }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }

  SoftmaxOptions options;
};
LOOM_MODULE(Softmax);

using LogSoftmaxOptions = SoftmaxOptions;

class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : Module("LogSoftmax"), options(options) {}
  Tensor forward(const Tensor& input) { return loom::log_softmax(input, options.dim()); }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }

  LogSoftmaxOptions options;
};
LOOM_MODULE(LogSoftmax);

}  // namespace loom::nn
