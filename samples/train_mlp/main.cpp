// train_mlp — a 64-256-256-10 MLP on the 8x8 digits, Adam (lr 1e-3),
// batch 32; the C++ twin of samples/python/train_digits.py.
//
//   build/bin/train_mlp [--device cpu|sim|...] [--epochs 20] [--out train_mlp.safetensors]
//
// The loop, the flags and the save/reload check are in samples/common.
#include "train_loop.h"

#include <loom/loom.h>

namespace nn = loom::nn;
namespace optim = loom::optim;

int main(int argc, char** argv) {
  loom_samples::Recipe recipe{
      .name = "train_mlp",
      .default_epochs = 20,
      .example_shape = {64},
      .make_model = [] {
        return nn::Sequential(nn::Linear(64, 256), nn::ReLU(), nn::Linear(256, 256), nn::ReLU(),
                              nn::Linear(256, 10));
      },
      .make_optimizer = [](std::vector<loom::Tensor> params) {
        return std::make_unique<optim::Adam>(std::move(params), optim::AdamOptions(1e-3));
      },
  };
  return loom_samples::run_training_sample(recipe, argc, argv);
}
