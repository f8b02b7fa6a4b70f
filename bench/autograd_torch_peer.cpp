// autograd_torch_peer.cpp — libtorch 1.13's autograd on the calls of
// autograd_bench.cpp.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <torch/csrc/autograd/generated/variable_factories.h>

namespace {

void torch_add_1elem_grad(benchmark::State& state) {
  auto a = torch::ones({1}, c10::requires_grad());
  auto b = torch::ones({1}, c10::requires_grad());
  for (auto _ : state) benchmark::DoNotOptimize(at::add(a, b));
}
BENCHMARK(torch_add_1elem_grad);

constexpr int kChain = 1000;

void torch_backward_chain(benchmark::State& state) {
  auto x = torch::ones({1}, c10::requires_grad());
  auto w = torch::full({1}, 1.0001);
  for (auto _ : state) {
    state.PauseTiming();
    at::Tensor y = x;
    for (int i = 0; i < kChain; ++i) y = y * w;
    state.ResumeTiming();
    y.backward();
  }
}
BENCHMARK(torch_backward_chain)->UseRealTime();

void torch_forward_backward_chain(benchmark::State& state) {
  auto x = torch::ones({1}, c10::requires_grad());
  auto w = torch::full({1}, 1.0001);
  for (auto _ : state) {
    at::Tensor y = x;
    for (int i = 0; i < kChain; ++i) y = y * w;
    y.backward();
  }
}
BENCHMARK(torch_forward_backward_chain)->UseRealTime();

void torch_conv2d_forward_backward(benchmark::State& state) {
  auto x = torch::randn({32, 32, 32, 32}, c10::requires_grad());
  auto w = torch::randn({32, 32, 3, 3}, c10::requires_grad());
  auto b = torch::randn({32}, c10::requires_grad());
  for (auto _ : state) at::conv2d(x, w, b, {1, 1}, {1, 1}).sum().backward();
}
BENCHMARK(torch_conv2d_forward_backward)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
