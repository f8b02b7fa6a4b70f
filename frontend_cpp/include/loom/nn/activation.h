// loom/nn/activation.h — elementwise activations and (log-)softmax as
// modules: ReLU, ReLU6, Hardtanh, LeakyReLU, ELU, Softplus, GELU, SiLU, Sigmoid, Tanh,
// Softmax, LogSoftmax.
#pragma once

#include <loom/nn/functional.h>
#include <loom/nn/module.h>
#include <loom/ops.h>

namespace loom::nn {

#define LOOM_DEFINE_ACTIVATION(Name, fn)                              \
  class Name##Impl : public Module {                                  \
   public:                                                            \
    Name##Impl() : Module(#Name) {}                                   \
    LOOM_CLONE_STATELESS(Name##Impl)                                  \
    Tensor forward(const Tensor& input) { return loom::fn(input); }   \
  };                                                                  \
  LOOM_MODULE(Name)

LOOM_DEFINE_ACTIVATION(SiLU, silu);
LOOM_DEFINE_ACTIVATION(Sigmoid, sigmoid);
LOOM_DEFINE_ACTIVATION(Tanh, tanh);
#undef LOOM_DEFINE_ACTIVATION

using ReLUOptions = functional::ReLUFuncOptions;

class ReLUImpl : public Module {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {}) : Module("ReLU"), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(ReLUImpl)
  Tensor forward(const Tensor& input) { return functional::relu(input, options); }
  std::string extra_repr() const override { return options.inplace() ? "inplace=True" : ""; }

  ReLUOptions options;
};
LOOM_MODULE(ReLU);

using ReLU6Options = functional::ReLU6FuncOptions;

class ReLU6Impl : public Module {
 public:
  explicit ReLU6Impl(const ReLU6Options& options = {}) : Module("ReLU6"), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(ReLU6Impl)
  Tensor forward(const Tensor& input) { return functional::relu6(input, options); }
  std::string extra_repr() const override { return options.inplace() ? "inplace=True" : ""; }

  ReLU6Options options;
};
LOOM_MODULE(ReLU6);

using HardtanhOptions = functional::HardtanhFuncOptions;

class HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});
  LOOM_CLONE_FROM_OPTIONS(HardtanhImpl)
  Tensor forward(const Tensor& input) { return functional::hardtanh(input, options); }
  std::string extra_repr() const override;

  HardtanhOptions options;
};
LOOM_MODULE(Hardtanh);

using LeakyReLUOptions = functional::LeakyReLUFuncOptions;

class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : Module("LeakyReLU"), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(LeakyReLUImpl)
  Tensor forward(const Tensor& input) { return functional::leaky_relu(input, options); }
  std::string extra_repr() const override;

  LeakyReLUOptions options;
};
LOOM_MODULE(LeakyReLU);

using ELUOptions = functional::ELUFuncOptions;

class ELUImpl : public Module {
 public:
  explicit ELUImpl(const ELUOptions& options = {}) : Module("ELU"), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(ELUImpl)
  Tensor forward(const Tensor& input) { return functional::elu(input, options); }
  std::string extra_repr() const override;

  ELUOptions options;
};
LOOM_MODULE(ELU);

using SoftplusOptions = functional::SoftplusFuncOptions;

class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = {}) : Module("Softplus"), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(SoftplusImpl)
  Tensor forward(const Tensor& input) { return functional::softplus(input, options); }
  std::string extra_repr() const override;

  SoftplusOptions options;
};
LOOM_MODULE(Softplus);

struct GELUOptions {
  // "none" (the exact erf form) or "tanh" (the approximation).
  LOOM_ARG(std::string, approximate) = "none";
};

class GELUImpl : public Module {
 public:
  explicit GELUImpl(const GELUOptions& options = {});
  LOOM_CLONE_FROM_OPTIONS(GELUImpl)
  Tensor forward(const Tensor& input) { return loom::gelu(input, options.approximate()); }
  std::string extra_repr() const override { return "approximate='" + options.approximate() + "'"; }

  GELUOptions options;
};
LOOM_MODULE(GELU);

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: Softmax(1) reads well
  LOOM_ARG(int64_t, dim);
};

using LogSoftmaxOptions = SoftmaxOptions;

namespace detail {
// Softmax and LogSoftmax: `fn` along options.dim.
template <Tensor (*Fn)(const Tensor&, int64_t, std::optional<DType>)>
class SoftmaxBase : public Module {
 public:
  Tensor forward(const Tensor& input) { return Fn(input, options.dim(), std::nullopt); }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }

  SoftmaxOptions options;

 protected:
  SoftmaxBase(const char* type_name, const SoftmaxOptions& options)
      : Module(type_name), options(options) {}
};
}  // namespace detail

class SoftmaxImpl : public detail::SoftmaxBase<&loom::softmax> {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : SoftmaxBase("Softmax", options) {}
  LOOM_CLONE_FROM_OPTIONS(SoftmaxImpl)
};
LOOM_MODULE(Softmax);

class LogSoftmaxImpl : public detail::SoftmaxBase<&loom::log_softmax> {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : SoftmaxBase("LogSoftmax", options) {}
  LOOM_CLONE_FROM_OPTIONS(LogSoftmaxImpl)
};
LOOM_MODULE(LogSoftmax);

}  // namespace loom::nn
