// linear.cpp — Linear, Bilinear, Flatten (loom/nn/linear.h).
#include <loom/nn/init.h>
#include <loom/nn/linear.h>
#include <loom/ops.h>

#include <cmath>

#include "layer_util.h"

namespace loom::nn {

LinearImpl::LinearImpl(const LinearOptions& options_) : Module("Linear"), options(options_) {
  LOOM_CHECK(options.in_features() >= 0 && options.out_features() >= 0,
             "Linear: in_features and out_features must be >= 0, got ", options.in_features(), " and ",
             options.out_features());
  weight = register_parameter("weight", loom::empty({options.out_features(), options.in_features()}));
  if (options.bias()) bias = register_parameter("bias", loom::empty({options.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = options.in_features();
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) {
  LOOM_CHECK(input.dim() >= 1 && input.size(-1) == options.in_features(), "Linear: expected input "
             "with last dim ", options.in_features(), ", got shape ", shape_str(input.sizes()));
  return linear(input, weight, detail::optional_bias(bias));
}

std::string LinearImpl::extra_repr() const {
  return loom::detail::cat("in_features=", options.in_features(), ", out_features=", options.out_features(),
                     ", bias=", detail::py_bool(options.bias()));
}

BilinearImpl::BilinearImpl(const BilinearOptions& options_) : Module("Bilinear"), options(options_) {
  LOOM_CHECK(options.in1_features() > 0 && options.in2_features() > 0 && options.out_features() > 0,
             "Bilinear: feature sizes must be > 0");
  weight = register_parameter(
      "weight", loom::empty({options.out_features(), options.in1_features(), options.in2_features()}));
  if (options.bias()) bias = register_parameter("bias", loom::empty({options.out_features()}));
  reset_parameters();
}

void BilinearImpl::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.in1_features()));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

Tensor BilinearImpl::forward(const Tensor& input1, const Tensor& input2) {
  const int64_t in1 = options.in1_features(), in2 = options.in2_features(), out = options.out_features();
  LOOM_CHECK(input1.dim() >= 1 && input1.size(-1) == in1 && input2.dim() >= 1 &&
                 input2.size(-1) == in2,
             "Bilinear: expected inputs [*, ", in1, "] and [*, ", in2, "], got ",
             shape_str(input1.sizes()), " and ", shape_str(input2.sizes()));
  // x1 [*, in1] @ W viewed [in1, out * in2] -> [*, out, in2], then the
  // contraction with x2 over in2.
  Tensor w = weight.permute({1, 0, 2}).reshape({in1, out * in2});
  Tensor t = input1.matmul(w);
  std::vector<int64_t> shape = t.shape();
  shape.back() = out;
  shape.push_back(in2);
  Tensor y = (t.reshape(shape) * input2.unsqueeze(-2)).sum({-1});
  return bias.defined() ? y + bias : y;
}

std::string BilinearImpl::extra_repr() const {
  return loom::detail::cat("in1_features=", options.in1_features(), ", in2_features=", options.in2_features(),
                     ", out_features=", options.out_features(), ", bias=", detail::py_bool(options.bias()));
}

std::string FlattenImpl::extra_repr() const {
  return loom::detail::cat("start_dim=", options.start_dim(), ", end_dim=", options.end_dim());
}

}  // namespace loom::nn
