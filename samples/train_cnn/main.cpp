// train_cnn — a small CNN on the 8x8 digits: conv(1->16, 3, pad 1) - relu -
// conv(16->32, 3, pad 1) - relu - maxpool(2) - flatten - linear(512->10),
// SGD with momentum 0.9, batch 32.
//
//   build/bin/train_cnn [--device cpu|sim|...] [--epochs 15] [--out train_cnn.safetensors]
//
// The loop, the flags and the save/reload check are in samples/common.
#include "train_loop.h"

#include <loom/loom.h>

namespace nn = loom::nn;
namespace optim = loom::optim;

int main(int argc, char** argv) {
  loom_samples::Recipe recipe{
      .name = "train_cnn",
      .default_epochs = 15,
      .example_shape = {1, 8, 8},  // one channel, 8x8 pixels
      .make_model = [] {
        return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::ReLU(),
                              nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::ReLU(),
                              nn::MaxPool2d(2), nn::Flatten(), nn::Linear(32 * 4 * 4, 10));
      },
      .make_optimizer = [](std::vector<loom::Tensor> params) {
        return std::make_unique<optim::SGD>(std::move(params), optim::SGDOptions(0.05).momentum(0.9));
      },
  };
  return loom_samples::run_training_sample(recipe, argc, argv);
}
