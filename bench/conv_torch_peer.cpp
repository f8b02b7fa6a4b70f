// conv_torch_peer.cpp — conv_bench.cpp's calls through libtorch 1.13 (CPU,
// its oneDNN path for float32 conv), measured in the same process.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

namespace {

void torch_conv2d_resnet_3x3(benchmark::State& state) {
  auto x = at::randn({32, 64, 56, 56});
  auto w = at::randn({64, 64, 3, 3});
  auto b = at::randn({64});
  for (auto _ : state) benchmark::DoNotOptimize(at::conv2d(x, w, b, {1, 1}, {1, 1}));
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * 32 * 64 * 56 * 56 * 64 * 9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(torch_conv2d_resnet_3x3)->Unit(benchmark::kMillisecond)->UseRealTime();

void torch_max_pool2d_resnet(benchmark::State& state) {
  auto x = at::randn({32, 64, 112, 112});
  for (auto _ : state) benchmark::DoNotOptimize(at::max_pool2d(x, {3, 3}, {2, 2}, {1, 1}));
  state.SetBytesProcessed(state.iterations() * 32 * 64 * (112 * 112 + 56 * 56) * 4);
}
BENCHMARK(torch_max_pool2d_resnet)->Unit(benchmark::kMillisecond)->UseRealTime();

void torch_adaptive_avg_pool2d_head(benchmark::State& state) {
  auto x = at::randn({32, 2048, 7, 7});
  for (auto _ : state) benchmark::DoNotOptimize(at::adaptive_avg_pool2d(x, {1, 1}));
}
BENCHMARK(torch_adaptive_avg_pool2d_head)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
