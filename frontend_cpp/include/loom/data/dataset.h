// loom/data/dataset.h — what a DataLoader reads: a Dataset of Examples, and
// TensorDataset over whole tensors.
#pragma once

#include <loom/tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace loom::data {

// One sample, or (from a DataLoader) a batch of them stacked along dim 0.
// `target` may be undefined for a dataset without targets.
struct Example {
  Tensor data;
  Tensor target;
};

// A map-style dataset. get() is called from the DataLoader's worker
// threads, concurrently, so it must be safe to call from several threads.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual size_t size() const = 0;
  virtual Example get(size_t index) const = 0;
  // A whole batch at once, when the dataset can do better than stacking
  // get()'s results; nullopt (the default) means "stack them".
  virtual std::optional<Example> get_batch(const std::vector<int64_t>& indices) const {
    (void)indices;
    return std::nullopt;
  }
};

// Rows of `data` (and `target`, when given) along dim 0. Batches are one
// index_select over each tensor rather than per-row stacking.
class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(Tensor data, Tensor target = Tensor());
  size_t size() const override;
  Example get(size_t index) const override;
  std::optional<Example> get_batch(const std::vector<int64_t>& indices) const override;
  const Tensor& data() const { return data_; }
  const Tensor& target() const { return target_; }

 private:
  Tensor data_, target_;
};

}  // namespace loom::data
