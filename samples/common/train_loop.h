// train_loop.h — what train_mlp and train_cnn share: command-line flags, the
// choice of device, and the loop (train, report each epoch, save with
// loom::io, reload into a fresh model, check). Each sample's main.cpp only
// says which model and which optimizer.
//
//   train_mlp | train_cnn [--device TYPE] [--epochs N] [--out PATH] [--seed S] [--min-accuracy A]
//             [--data PATH]
//
// Exit status: 0 when the reloaded model scores exactly what the trained one
// did and at least --min-accuracy on the test set; 1 otherwise; 2 for bad flags.
#pragma once

#include <loom/nn.h>
#include <loom/optim.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace loom_samples {

struct Recipe {
  std::string name;                    // "train_mlp": usage text and checkpoint name
  int default_epochs = 10;
  std::vector<int64_t> example_shape;  // one example as the model takes it: {64} or {1, 8, 8}
  std::function<loom::nn::Sequential()> make_model;
  std::function<std::unique_ptr<loom::optim::Optimizer>(std::vector<loom::Tensor>)> make_optimizer;
};

// The best device type available: the highest-priority plugin's non-cpu type
// that has devices, else "cpu". "sim" (testing/sim_device) is never
// chosen on its own: it is a reference backend that runs most ops through
// the CPU fallback, so it is correct but never faster; --device sim asks for it.
std::string best_device_type();

// Parses the flags, trains, saves, reloads and checks; returns the exit status.
int run_training_sample(const Recipe& recipe, int argc, char** argv);

}  // namespace loom_samples
