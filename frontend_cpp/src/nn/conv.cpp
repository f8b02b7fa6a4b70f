// conv.cpp — Conv1d, Conv2d, ConvTranspose2d (loom/nn/conv.h).
#include <loom/nn/conv.h>
#include <loom/nn/init.h>
#include <loom/ops.h>

#include "layer_util.h"

#include <cmath>
#include <sstream>

namespace loom::nn {
namespace detail {

namespace {
template <size_t D>
std::string tuple_str(const ExpandingArray<D>& a) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < D; ++i) os << (i ? ", " : "") << a[i];
  os << (D == 1 ? ",)" : ")");
  return os.str();
}
}  // namespace

template <size_t D>
ConvBase<D>::ConvBase(const char* type_name, const ConvOptions<D>& options_, bool transposed)
    : Module(type_name), options(options_), transposed_(transposed) {
  const int64_t in = options.in_channels(), out = options.out_channels(), g = options.groups();
  LOOM_CHECK(in > 0 && out > 0, type_name, ": in_channels and out_channels must be > 0, got ", in,
             " and ", out);
  LOOM_CHECK(g > 0 && in % g == 0 && out % g == 0, type_name, ": in_channels (", in,
             ") and out_channels (", out, ") must be divisible by groups (", g, ")");
  for (size_t i = 0; i < D; ++i) {
    LOOM_CHECK(options.kernel_size()[i] > 0 && options.stride()[i] > 0 && options.dilation()[i] > 0,
               type_name, ": kernel_size, stride and dilation must be > 0");
    LOOM_CHECK(options.padding()[i] >= 0, type_name, ": padding must be >= 0");
    LOOM_CHECK(transposed || options.output_padding()[i] == 0, type_name,
               ": output_padding is only for transposed convolutions");
  }
  std::vector<int64_t> shape = transposed ? std::vector<int64_t>{in, out / g}
                                          : std::vector<int64_t>{out, in / g};
  for (size_t i = 0; i < D; ++i) shape.push_back(options.kernel_size()[i]);
  weight = register_parameter("weight", loom::empty(shape));
  if (options.bias()) bias = register_parameter("bias", loom::empty({out}));
  reset_parameters();
}

template <size_t D>
void ConvBase<D>::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    init::uniform_(bias, -bound, bound);
  }
}

template <size_t D>
std::string ConvBase<D>::extra_repr() const {
  // PyTorch's: only the settings that differ from their defaults.
  std::ostringstream os;
  os << options.in_channels() << ", " << options.out_channels()
     << ", kernel_size=" << tuple_str(options.kernel_size())
     << ", stride=" << tuple_str(options.stride());
  if (options.padding() != ExpandingArray<D>(0)) os << ", padding=" << tuple_str(options.padding());
  if (options.dilation() != ExpandingArray<D>(1)) os << ", dilation=" << tuple_str(options.dilation());
  if (options.output_padding() != ExpandingArray<D>(0))
    os << ", output_padding=" << tuple_str(options.output_padding());
  if (options.groups() != 1) os << ", groups=" << options.groups();
  if (!options.bias()) os << ", bias=" << py_bool(false);
  return os.str();
}

template class ConvBase<1>;
template class ConvBase<2>;

}  // namespace detail

Tensor Conv1dImpl::forward(const Tensor& input) {
  return conv1d(input, weight, detail::optional_bias(bias), options.stride(), options.padding(),
                options.dilation(), options.groups());
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  return conv2d(input, weight, detail::optional_bias(bias), options.stride(), options.padding(),
                options.dilation(), options.groups());
}

Tensor ConvTranspose2dImpl::forward(const Tensor& input) {
  return conv_transpose2d(input, weight, detail::optional_bias(bias), options.stride(),
                          options.padding(), options.output_padding(), options.groups(),
                          options.dilation());
}

}  // namespace loom::nn
