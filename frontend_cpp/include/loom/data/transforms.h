// loom/data/transforms.h — what Dataset::map applies (torch::data::transforms):
//
//   dataset.map(Normalize<>(0.1307, 0.3081))   // each example's data
//          .map(Stack<>());                    // the batch into one Example<>
//
// BatchTransform maps a whole batch; Transform maps each example of a
// vector batch; TensorTransform maps each example's data tensor; Lambda and
// TensorLambda wrap a function; a Collation (Stack) turns a vector of
// examples into one batch.
#pragma once

#include <loom/data/example.h>
#include <loom/ops.h>

#include <functional>
#include <utility>
#include <vector>

namespace loom::data::transforms {

template <class InputBatch, class OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

template <class Input, class Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;
  virtual Output apply(Input input) = 0;
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> out;
    out.reserve(input_batch.size());
    for (auto& input : input_batch) out.push_back(apply(std::move(input)));
    return out;
  }
};

template <class Input, class Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  Output apply(Input input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

template <class Batch, class Output = Batch>
class BatchLambda : public BatchTransform<Batch, Output> {
 public:
  using FunctionType = std::function<Output(Batch)>;
  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  Output apply_batch(Batch batch) override { return function_(std::move(batch)); }

 private:
  FunctionType function_;
};

// Maps the data tensor of each example; the target passes through.
template <class Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  virtual Tensor operator()(Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

template <class Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;
  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

// (data - mean) / stddev per channel (dim 0 of each example's data): one
// value for every channel, or one per channel.
template <class Target = Tensor>
class Normalize : public TensorTransform<Target> {
 public:
  Normalize(double mean, double stddev) : Normalize(std::vector<double>{mean}, std::vector<double>{stddev}) {}
  Normalize(const std::vector<double>& mean, const std::vector<double>& stddev)
      : mean(per_channel(mean)), stddev(per_channel(stddev)) {}
  Tensor operator()(Tensor input) override { return input.sub(mean).div(stddev); }
  Tensor mean, stddev;

 private:
  static Tensor per_channel(const std::vector<double>& v) {
    return loom::tensor(v, kFloat).view({static_cast<int64_t>(v.size()), 1, 1});
  }
};

template <class T>
using Collation = BatchTransform<std::vector<T>, T>;

template <class T = Example<>>
struct Stack;

// Stacks the data and the targets of a batch's examples along a new dim 0.
template <>
struct Stack<Example<>> : Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& e : examples) {
      data.push_back(std::move(e.data));
      targets.push_back(std::move(e.target));
    }
    return {loom::stack(data), loom::stack(targets)};
  }
};

template <>
struct Stack<TensorExample> : Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<Tensor> data;
    data.reserve(examples.size());
    for (auto& e : examples) data.push_back(std::move(e.data));
    return loom::stack(data);
  }
};

}  // namespace loom::data::transforms
