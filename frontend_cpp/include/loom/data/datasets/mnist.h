// loom/data/datasets/mnist.h — MNIST from its four IDX files
// (torch::data::datasets::MNIST):
//
//   auto train = loom::data::datasets::MNIST("./data")   // train-*-ubyte
//                    .map(loom::data::transforms::Normalize<>(0.1307, 0.3081))
//                    .map(loom::data::transforms::Stack<>());
//
// Images are float32 (N, 1, rows, cols) scaled to [0, 1], targets int64.
// The files are root/train-images-idx3-ubyte and train-labels-idx1-ubyte
// (Mode::kTrain) or t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte
// (kTest), uncompressed. The image count and size come from the headers,
// so a subset of MNIST (or any IDX image set) loads too; libtorch insists
// on 60000 / 10000 images of 28x28.
#pragma once

#include <loom/data/datasets/base.h>

#include <string>

namespace loom::data::datasets {

class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };

  // Reads both files; throws loom::Error naming the file for a missing,
  // short or malformed one, or image and label counts that differ.
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;
  bool is_train() const noexcept { return train_; }
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor images_, targets_;
  bool train_;
};

}  // namespace loom::data::datasets
