// loom/data/datasets/base.h — the dataset interfaces a DataLoader reads, as
// libtorch's (torch::data::datasets):
//
//   class Images : public loom::data::datasets::Dataset<Images> {
//    public:
//     loom::data::Example<> get(size_t index) override;
//     std::optional<size_t> size() const override;
//   };
//   auto ds = Images(...).map(loom::data::transforms::Stack<>());
//
// BatchDataset<Self, Batch> answers a batch request (indices) with a Batch;
// Dataset<Self, SingleExample> is the common case, one example per index,
// whose batch is the vector of them. map() wraps a dataset in a transform
// (MapDataset). A DataLoader with workers calls get / get_batch from several
// threads at once, so both must be safe to call concurrently.
#pragma once

#include <loom/data/example.h>

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace loom {
// A borrowed run of values, as libtorch's ArrayRef (batch requests).
template <class T>
using ArrayRef = std::span<const T>;
}  // namespace loom

namespace loom::data::datasets {

template <class Source, class Transform>
class MapDataset;
template <class Source, class Transform>
MapDataset<Source, Transform> map(Source dataset, Transform transform);

template <class Self, class Batch = std::vector<Example<>>, class BatchRequest = ArrayRef<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  // A stateless dataset: the loader's sampler picks the indices.
  static constexpr bool is_stateful = false;

  virtual ~BatchDataset() = default;
  virtual Batch get_batch(BatchRequest request) = 0;
  // The number of examples; nullopt when unknown (a stateless loader needs it).
  virtual std::optional<size_t> size() const = 0;

  // This dataset with `transform` applied to every batch it returns.
  template <class Transform>
  MapDataset<Self, Transform> map(Transform transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  template <class Transform>
  MapDataset<Self, Transform> map(Transform transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

template <class Self, class SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;
  virtual ExampleType get(size_t index) = 0;
  // get() of each index, in order.
  std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

}  // namespace loom::data::datasets
