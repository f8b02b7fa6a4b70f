// loom/nn/linear.h — Linear, Bilinear, Identity, Flatten.
//
//   loom::nn::Linear fc(loom::nn::LinearOptions(64, 256).bias(false));
//   auto y = fc(x);   // x [*, 64] -> [*, 256]
#pragma once

#include <loom/nn/module.h>

namespace loom::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  LOOM_ARG(int64_t, in_features);
  LOOM_ARG(int64_t, out_features);
  LOOM_ARG(bool, bias) = true;
};

// y = x Wᵀ + b; weight [out, in], bias [out]. Initialised as PyTorch:
// kaiming_uniform_(a = √5) for the weight, U(±1/√in) for the bias.
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features)
      : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  LOOM_CLONE_FROM_OPTIONS(LinearImpl)
  void reset_parameters();
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;

  LinearOptions options;
  Tensor weight;
  Tensor bias;  // undefined without bias
};
LOOM_MODULE(Linear);

struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  LOOM_ARG(int64_t, in1_features);
  LOOM_ARG(int64_t, in2_features);
  LOOM_ARG(int64_t, out_features);
  LOOM_ARG(bool, bias) = true;
};

// y_k = x1ᵀ W_k x2 + b_k; weight [out, in1, in2]; weight and bias U(±1/√in1).
class BilinearImpl : public Module {
 public:
  BilinearImpl(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : BilinearImpl(BilinearOptions(in1_features, in2_features, out_features)) {}
  explicit BilinearImpl(const BilinearOptions& options);
  LOOM_CLONE_FROM_OPTIONS(BilinearImpl)
  void reset_parameters();
  // input1 [*, in1], input2 [*, in2] -> [*, out].
  Tensor forward(const Tensor& input1, const Tensor& input2);
  std::string extra_repr() const override;

  BilinearOptions options;
  Tensor weight;
  Tensor bias;
};
LOOM_MODULE(Bilinear);

// Identity: returns its input unchanged (PyTorch's nn.Identity: stands in for a
// layer that a model configuration leaves out, e.g. inside a Sequential).
class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  LOOM_CLONE_STATELESS(IdentityImpl)
  Tensor forward(const Tensor& input) { return input; }
};
LOOM_MODULE(Identity);

struct FlattenOptions {
  LOOM_ARG(int64_t, start_dim) = 1;
  LOOM_ARG(int64_t, end_dim) = -1;
};

// Flattens dims start_dim..end_dim (default: all but the batch dim).
class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : Module("Flatten"), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(FlattenImpl)
  Tensor forward(const Tensor& input) { return input.flatten(options.start_dim(), options.end_dim()); }
  std::string extra_repr() const override;

  FlattenOptions options;
};
LOOM_MODULE(Flatten);

}  // namespace loom::nn
