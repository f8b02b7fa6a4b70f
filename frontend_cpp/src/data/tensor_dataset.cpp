// tensor_dataset.cpp — TensorDataset.
#include <loom/data/datasets/tensor.h>
#include <loom/error.h>
#include <loom/ops.h>

namespace loom::data::datasets {

TensorDataset::TensorDataset(Tensor data, Tensor target) : data_(std::move(data)), target_(std::move(target)) {
  LOOM_CHECK(data_.defined() && data_.dim() >= 1, "data: TensorDataset needs a data tensor with at least one dim");
  LOOM_CHECK(!target_.defined() || (target_.dim() >= 1 && target_.size(0) == data_.size(0)),
             "data: TensorDataset: data has ", data_.size(0), " rows but target has ",
             target_.defined() && target_.dim() >= 1 ? target_.size(0) : 0);
}

std::optional<size_t> TensorDataset::size() const { return static_cast<size_t>(data_.size(0)); }

Example<> TensorDataset::get(size_t index) const {
  const auto n = static_cast<size_t>(data_.size(0));
  LOOM_CHECK(index < n, "data: TensorDataset index ", index, " out of range for size ", n);
  const auto i = static_cast<int64_t>(index);
  return {data_.select(0, i), target_.defined() ? target_.select(0, i) : Tensor()};
}

Example<> TensorDataset::get_batch(ArrayRef<size_t> indices) {
  const std::vector<int64_t> rows(indices.begin(), indices.end());
  const Tensor index = from_vector(rows, {static_cast<int64_t>(rows.size())}, data_.device());
  Example<> batch{data_.index_select(0, index), Tensor()};
  if (target_.defined()) batch.target = target_.index_select(0, index.to(target_.device()));
  return batch;
}

}  // namespace loom::data::datasets
