// loom/nn/init.h — in-place initialisers with PyTorch's defaults and fan
// rules (torch.nn.init). Each runs under no-grad, so it works on parameters,
// and returns the tensor it filled.
//
//   loom::nn::init::kaiming_uniform_(w, std::sqrt(5.0));   // Linear's weight
//   loom::nn::init::xavier_normal_(w, loom::nn::init::calculate_gain("tanh"));
#pragma once

#include <loom/tensor.h>

#include <string>
#include <utility>

namespace loom::nn::init {

// The recommended gain for `nonlinearity`: linear / conv* / sigmoid 1,
// tanh 5/3, relu sqrt(2), leaky_relu sqrt(2 / (1 + param^2)) (param =
// negative slope, default 0.01), selu 3/4. Unknown names are an error.
double calculate_gain(const std::string& nonlinearity, double param = 0.01);

// (fan_in, fan_out) of a weight [out, in, *kernel]: in * prod(kernel),
// out * prod(kernel). Needs at least 2 dims.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor uniform_(Tensor tensor, double low = 0.0, double high = 1.0);
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0);
Tensor constant_(Tensor tensor, double value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);

// U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
// N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);

// mode "fan_in" (default) or "fan_out"; `a` is the negative slope used by
// leaky_relu's gain. bound = gain * sqrt(3 / fan) for uniform, std =
// gain / sqrt(fan) for normal. A tensor with no elements is left alone.
Tensor kaiming_uniform_(Tensor tensor, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu");
Tensor kaiming_normal_(Tensor tensor, double a = 0.0, const std::string& mode = "fan_in",
                       const std::string& nonlinearity = "leaky_relu");

}  // namespace loom::nn::init
