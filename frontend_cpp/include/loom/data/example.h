// loom/data/example.h — one sample of a dataset: data and target
// (torch::data::Example). Example<> holds two tensors; Example<Tensor,
// NoTarget> (TensorExample) holds data alone.
#pragma once

#include <loom/tensor.h>

#include <utility>

namespace loom::data {

namespace example {
// The Target of an example that has none.
struct NoTarget {};
}  // namespace example

template <class Data = Tensor, class Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}
  Data data;
  Target target;
};

template <>
struct Example<Tensor, example::NoTarget> {
  using DataType = Tensor;
  using TargetType = example::NoTarget;
  Example() = default;
  Example(Tensor data) : data(std::move(data)) {}  // NOLINT: implicit, as libtorch's
  operator Tensor&() { return data; }              // NOLINT
  operator const Tensor&() const { return data; }  // NOLINT
  Tensor data;
};

using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace loom::data
