// pooling.cpp — MaxPool2d, AvgPool2d, AdaptiveAvgPool2d (loom/nn/pooling.h).
#include <loom/nn/pooling.h>
#include <loom/ops.h>

#include <sstream>

#include "layer_util.h"

namespace loom::nn {

namespace {
// "2" when both values agree, else "(2, 3)" (PyTorch prints what it was given;
// loom keeps the expanded pair, so equal pairs print as one number).
std::string pair_str(const ExpandingArray<2>& a) {
  return a[0] == a[1] ? std::to_string(a[0]) : loom::detail::cat("(", a[0], ", ", a[1], ")");
}
}  // namespace

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  const ExpandingArray<2> stride = options.stride().value_or(options.kernel_size());
  return max_pool2d(input, options.kernel_size(), stride, options.padding(), options.dilation(),
                    options.ceil_mode());
}

std::string MaxPool2dImpl::extra_repr() const {
  return loom::detail::cat("kernel_size=", pair_str(options.kernel_size()),
                           ", stride=", pair_str(options.stride().value_or(options.kernel_size())),
                           ", padding=", pair_str(options.padding()),
                           ", dilation=", pair_str(options.dilation()),
                           ", ceil_mode=", detail::py_bool(options.ceil_mode()));
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  const ExpandingArray<2> stride = options.stride().value_or(options.kernel_size());
  return avg_pool2d(input, options.kernel_size(), stride, options.padding(), options.ceil_mode(),
                    options.count_include_pad(), options.divisor_override());
}

std::string AvgPool2dImpl::extra_repr() const {
  return loom::detail::cat("kernel_size=", pair_str(options.kernel_size()),
                           ", stride=", pair_str(options.stride().value_or(options.kernel_size())),
                           ", padding=", pair_str(options.padding()));
}

std::string AdaptiveAvgPool2dImpl::extra_repr() const {
  return "output_size=" + pair_str(options.output_size());
}

}  // namespace loom::nn
