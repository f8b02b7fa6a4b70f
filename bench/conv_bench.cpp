// conv_bench.cpp — convolution and pooling on typical CNN shapes. The
// libtorch peers (conv_torch_peer.cpp) run the same calls when built in;
// ratio_reporter pairs loom_X with torch_X.
#include <benchmark/benchmark.h>
#include <loom/loom.h>

namespace {

// ResNet-50 stage-1 conv: batch 32, 64 -> 64 channels, 56x56, 3x3, pad 1.
void loom_conv2d_resnet_3x3(benchmark::State& state) {
  auto x = loom::randn({32, 64, 56, 56});
  auto w = loom::randn({64, 64, 3, 3});
  auto b = loom::randn({64});
  for (auto _ : state) benchmark::DoNotOptimize(loom::conv2d(x, w, b, {1}, {1}));
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * 32 * 64 * 56 * 56 * 64 * 9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(loom_conv2d_resnet_3x3)->Unit(benchmark::kMillisecond)->UseRealTime();

// ResNet stem max pool: [32, 64, 112, 112], 3x3, stride 2, pad 1.
void loom_max_pool2d_resnet(benchmark::State& state) {
  auto x = loom::randn({32, 64, 112, 112});
  for (auto _ : state) benchmark::DoNotOptimize(loom::max_pool2d(x, {3}, {2}, {1}));
  state.SetBytesProcessed(state.iterations() * 32 * 64 * (112 * 112 + 56 * 56) * 4);
}
BENCHMARK(loom_max_pool2d_resnet)->Unit(benchmark::kMillisecond)->UseRealTime();

// Global average pool before a classifier head: [32, 2048, 7, 7] -> 1x1.
void loom_adaptive_avg_pool2d_head(benchmark::State& state) {
  auto x = loom::randn({32, 2048, 7, 7});
  for (auto _ : state) benchmark::DoNotOptimize(loom::adaptive_avg_pool2d(x, {1}));
}
BENCHMARK(loom_adaptive_avg_pool2d_head)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
