// train_step_torch_peer.cpp — libtorch 1.13's C++ frontend on the training
// steps of train_step_bench.cpp: the same models (torch::nn default init),
// data shapes, losses and optimizers.
#include <benchmark/benchmark.h>
#include <torch/nn.h>
#include <torch/optim.h>

namespace {

namespace nn = torch::nn;

constexpr int64_t kBatch = 32;

void run_steps(benchmark::State& state, nn::Sequential& model, torch::optim::Optimizer& opt, const at::Tensor& x,
               const at::Tensor& y) {
  for (auto _ : state) {
    opt.zero_grad();
    at::Tensor loss = nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  }
}

void torch_train_step_mlp_adam(benchmark::State& state) {
  torch::manual_seed(0);
  nn::Sequential model(nn::Linear(64, 256), nn::ReLU(), nn::Linear(256, 256), nn::ReLU(), nn::Linear(256, 10));
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(1e-3));
  const at::Tensor x = torch::randn({kBatch, 64});
  const at::Tensor y = torch::randint(0, 10, {kBatch});
  run_steps(state, model, opt, x, y);
}
BENCHMARK(torch_train_step_mlp_adam)->Unit(benchmark::kMicrosecond)->UseRealTime();

void torch_train_step_cnn_sgd(benchmark::State& state) {
  torch::manual_seed(0);
  nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::ReLU(),
                       nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                       nn::Flatten(), nn::Linear(512, 10));
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  const at::Tensor x = torch::randn({kBatch, 1, 8, 8});
  const at::Tensor y = torch::randint(0, 10, {kBatch});
  run_steps(state, model, opt, x, y);
}
BENCHMARK(torch_train_step_cnn_sgd)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
