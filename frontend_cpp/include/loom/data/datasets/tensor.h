// loom/data/datasets/tensor.h — TensorDataset: the rows of whole tensors.
//
// loom's TensorDataset takes data and an optional target and answers a
// batch request with one index_select per tensor (an Example<> already
// stacked), so it needs no Stack transform. (libtorch's takes one tensor
// and returns TensorExamples.)
#pragma once

#include <loom/data/datasets/base.h>

namespace loom::data::datasets {

class TensorDataset : public BatchDataset<TensorDataset, Example<>> {
 public:
  // `target`, when given, has as many rows (dim 0) as `data`.
  explicit TensorDataset(Tensor data, Tensor target = Tensor());
  Example<> get(size_t index) const;  // row `index` of each
  Example<> get_batch(ArrayRef<size_t> indices) override;
  std::optional<size_t> size() const override;
  const Tensor& data() const { return data_; }
  const Tensor& target() const { return target_; }

 private:
  Tensor data_, target_;
};

}  // namespace loom::data::datasets
