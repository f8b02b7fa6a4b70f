// device_layout.h — tensors on the device under test, laid out the way a
// case asks.
#pragma once

#include <loom/tensor.h>

#include <string>
#include <vector>

namespace loom::conformance {

// A non-contiguous copy of CPU tensor `t` on `device`: a larger buffer is
// allocated on the device and the result is a view into it at storage
// offset 1, with dimensions in reverse memory order (ndim >= 2) or stride 2
// (ndim 1). Empty tensors are copied as they are.
Tensor non_contiguous_on(const Tensor& t, Device device);

// "[[4,5],[5]]" for the sizes / strides of a list of (maybe absent) tensors.
std::string shapes_of(const std::vector<std::optional<Tensor>>& ts);
std::string strides_of(const std::vector<std::optional<Tensor>>& ts);

}  // namespace loom::conformance
