// train_step_bench.cpp — one whole training step through the C++ frontend
// (issue 7's target: at most 0.5x libtorch's step time). A step is
// zero_grad, forward, cross_entropy, backward and the optimizer step, on
// fixed random data:
//   mlp: Linear(64,256)-ReLU-Linear(256,256)-ReLU-Linear(256,10), batch 32, Adam(1e-3)
//   cnn: Conv2d(1,16,3,pad 1)-ReLU-Conv2d(16,32,3,pad 1)-ReLU-MaxPool2d(2)-
//        Flatten-Linear(512,10) on 8x8 images, batch 32, SGD(0.01, momentum 0.9)
// The libtorch peers (train_step_torch_peer.cpp) build the same models with
// torch::nn and its default init, under the same names with "torch_".
#include <benchmark/benchmark.h>
#include <loom/loom.h>

namespace {

namespace nn = loom::nn;
namespace F = loom::nn::functional;

constexpr int64_t kBatch = 32;

// Runs the timed loop: every iteration is one full step on (x, y).
template <class Model>
void run_steps(benchmark::State& state, Model& model, loom::optim::Optimizer& opt, const loom::Tensor& x,
               const loom::Tensor& y) {
  for (auto _ : state) {
    opt.zero_grad();
    loom::Tensor loss = F::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  }
}

void loom_train_step_mlp_adam(benchmark::State& state) {
  loom::manual_seed(0);
  nn::Sequential model(nn::Linear(64, 256), nn::ReLU(), nn::Linear(256, 256), nn::ReLU(), nn::Linear(256, 10));
  loom::optim::Adam opt(model->parameters(), loom::optim::AdamOptions(1e-3));
  const loom::Tensor x = loom::randn({kBatch, 64});
  const loom::Tensor y = loom::randint(0, 10, {kBatch});
  run_steps(state, model, opt, x, y);
}
BENCHMARK(loom_train_step_mlp_adam)->Unit(benchmark::kMicrosecond)->UseRealTime();

void loom_train_step_cnn_sgd(benchmark::State& state) {
  loom::manual_seed(0);
  nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::ReLU(),
                       nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                       nn::Flatten(), nn::Linear(512, 10));
  loom::optim::SGD opt(model->parameters(), loom::optim::SGDOptions(0.01).momentum(0.9));
  const loom::Tensor x = loom::randn({kBatch, 1, 8, 8});
  const loom::Tensor y = loom::randint(0, 10, {kBatch});
  run_steps(state, model, opt, x, y);
}
BENCHMARK(loom_train_step_cnn_sgd)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
