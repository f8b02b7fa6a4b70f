// loom/data/datasets/map.h — MapDataset: a dataset whose batches pass through
// a transform (what Dataset::map returns; torch::data::datasets::MapDataset).
#pragma once

#include <loom/data/datasets/base.h>

#include <optional>
#include <utility>

namespace loom::data::datasets {

template <class Source, class Transform>
class MapDataset
    : public BatchDataset<MapDataset<Source, Transform>, typename Transform::OutputBatchType,
                          typename Source::BatchRequestType> {
 public:
  using DatasetType = Source;
  using TransformType = Transform;
  using BatchRequestType = typename Source::BatchRequestType;
  using OutputBatchType = typename Transform::OutputBatchType;

  MapDataset(Source dataset, Transform transform) : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType request) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(request)));
  }
  std::optional<size_t> size() const override { return dataset_.size(); }

  const Source& dataset() const { return dataset_; }
  const Transform& transform() const { return transform_; }

 private:
  Source dataset_;
  Transform transform_;
};

template <class Source, class Transform>
MapDataset<Source, Transform> map(Source dataset, Transform transform) {
  static_assert(std::is_same_v<typename Source::BatchType, typename Transform::InputBatchType>,
                "map: the transform's input batch type is not the dataset's batch type");
  return MapDataset<Source, Transform>(std::move(dataset), std::move(transform));
}

}  // namespace loom::data::datasets
