// autograd_bench.cpp — what recording costs: a 1-element add whose inputs
// require grad (the bar: <= 500 ns and >= 3x faster than libtorch),
// and backward through a chain of 1000 small ops (time per node). Peers in
// autograd_torch_peer.cpp under the same names with "torch_".
#include <benchmark/benchmark.h>
#include <loom/autograd.h>
#include <loom/loom.h>

namespace {

void loom_add_1elem_grad(benchmark::State& state) {
  auto a = loom::ones({1}).requires_grad_();
  auto b = loom::ones({1}).requires_grad_();
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
}
BENCHMARK(loom_add_1elem_grad);

// The same add with grad mode off: what the autograd check costs when
// nothing is recorded.
void loom_add_1elem_no_grad(benchmark::State& state) {
  auto a = loom::ones({1}).requires_grad_();
  auto b = loom::ones({1}).requires_grad_();
  loom::autograd::NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
}
BENCHMARK(loom_add_1elem_no_grad);

constexpr int kChain = 1000;

// Backward only (the forward chain is rebuilt outside the timing).
void loom_backward_chain(benchmark::State& state) {
  auto x = loom::ones({1}).requires_grad_();
  auto w = loom::full({1}, 1.0001);
  for (auto _ : state) {
    state.PauseTiming();
    loom::Tensor y = x;
    for (int i = 0; i < kChain; ++i) y = y * w;
    state.ResumeTiming();
    y.backward();
  }
}
BENCHMARK(loom_backward_chain)->UseRealTime();

// Forward (recording) and backward together.
void loom_forward_backward_chain(benchmark::State& state) {
  auto x = loom::ones({1}).requires_grad_();
  auto w = loom::full({1}, 1.0001);
  for (auto _ : state) {
    loom::Tensor y = x;
    for (int i = 0; i < kChain; ++i) y = y * w;
    y.backward();
  }
}
BENCHMARK(loom_forward_backward_chain)->UseRealTime();

// A training step's convolution: conv2d forward, then backward to input,
// weight and bias. Batch 32, 32 -> 32 channels, 32x32, 3x3, pad 1.
void loom_conv2d_forward_backward(benchmark::State& state) {
  auto x = loom::randn({32, 32, 32, 32}).requires_grad_();
  auto w = loom::randn({32, 32, 3, 3}).requires_grad_();
  auto b = loom::randn({32}).requires_grad_();
  for (auto _ : state) loom::conv2d(x, w, b, {1}, {1}).sum().backward();
}
BENCHMARK(loom_conv2d_forward_backward)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
