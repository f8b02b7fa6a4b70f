// init.cpp — loom::nn::init (torch.nn.init's formulas and defaults).
#include <loom/nn/init.h>

#include <loom/autograd.h>

#include <cmath>

namespace loom::nn::init {

double calculate_gain(const std::string& nonlinearity, double param) {
  static const char* const linear_fns[] = {"linear", "conv1d", "conv2d", "conv3d",
                                           "conv_transpose1d", "conv_transpose2d",
                                           "conv_transpose3d", "sigmoid"};
  for (const char* fn : linear_fns)
    if (nonlinearity == fn) return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1.0 + param * param));
  if (nonlinearity == "selu") return 3.0 / 4.0;
  throw Error(loom::detail::cat("calculate_gain: unsupported nonlinearity '", nonlinearity,
                          "' (linear, conv*, sigmoid, tanh, relu, leaky_relu or selu)"));
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  LOOM_CHECK(tensor.dim() >= 2, "fan in and fan out can not be computed for a tensor with fewer "
                                "than 2 dimensions (got shape ", shape_str(tensor.sizes()), ")");
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

Tensor uniform_(Tensor tensor, double low, double high) {
  LOOM_CHECK(low <= high, "init::uniform_: low (", low, ") must not exceed high (", high, ")");
  autograd::NoGradGuard no_grad;
  tensor.uniform_(low, high);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  LOOM_CHECK(std >= 0, "init::normal_: std must be >= 0, got ", std);
  autograd::NoGradGuard no_grad;
  tensor.normal_(mean, std);
  return tensor;
}

Tensor constant_(Tensor tensor, double value) {
  autograd::NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0.0); }
Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1.0); }

namespace {
double xavier_std(const Tensor& tensor, double gain) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
}

// The fan `mode` names, and the gain of `nonlinearity` with slope `a`.
double kaiming_std(const Tensor& tensor, double a, const std::string& mode,
                   const std::string& nonlinearity) {
  LOOM_CHECK(mode == "fan_in" || mode == "fan_out", "kaiming init: mode '", mode,
             "' not supported, use fan_in or fan_out");
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  const double fan = static_cast<double>(mode == "fan_in" ? fan_in : fan_out);
  return calculate_gain(nonlinearity, a) / std::sqrt(fan);
}
}  // namespace

Tensor xavier_uniform_(Tensor tensor, double gain) {
  const double a = std::sqrt(3.0) * xavier_std(tensor, gain);
  return uniform_(std::move(tensor), -a, a);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  const double std = xavier_std(tensor, gain);
  return normal_(std::move(tensor), 0.0, std);
}

Tensor kaiming_uniform_(Tensor tensor, double a, const std::string& mode,
                        const std::string& nonlinearity) {
  if (tensor.numel() == 0) return tensor;  // PyTorch warns and leaves it
  const double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity);
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, const std::string& mode,
                       const std::string& nonlinearity) {
  if (tensor.numel() == 0) return tensor;
  const double std = kaiming_std(tensor, a, mode, nonlinearity);
  return normal_(std::move(tensor), 0.0, std);
}

}  // namespace loom::nn::init
