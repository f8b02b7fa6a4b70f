// nn_bench.cpp — the nn family's hot ops on the sizes the Op catalog issue
// names: softmax over (4096, 1024) float32 rows, the same along dim 0 (the
// column layout), log_softmax, and layer_norm over the last dim. The
// libtorch peers are nn_torch_peer.cpp ("torch_" in place of "loom_").
#include <benchmark/benchmark.h>
#include <loom/loom.h>

namespace {

constexpr int64_t kRows = 4096, kCols = 1024;
constexpr int64_t kBytes = kRows * kCols * 4 * 2;  // read once, write once

void loom_softmax_4096x1024(benchmark::State& state) {
  const loom::Tensor x = loom::randn({kRows, kCols});
  for (auto _ : state) benchmark::DoNotOptimize(loom::softmax(x, 1));
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(loom_softmax_4096x1024)->UseRealTime();

void loom_softmax_dim0_4096x1024(benchmark::State& state) {
  const loom::Tensor x = loom::randn({kRows, kCols});
  for (auto _ : state) benchmark::DoNotOptimize(loom::softmax(x, 0));
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(loom_softmax_dim0_4096x1024)->UseRealTime();

void loom_log_softmax_4096x1024(benchmark::State& state) {
  const loom::Tensor x = loom::randn({kRows, kCols});
  for (auto _ : state) benchmark::DoNotOptimize(loom::log_softmax(x, 1));
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(loom_log_softmax_4096x1024)->UseRealTime();

void loom_layer_norm_4096x1024(benchmark::State& state) {
  const loom::Tensor x = loom::randn({kRows, kCols});
  const loom::Tensor w = loom::randn({kCols}), b = loom::randn({kCols});
  for (auto _ : state) benchmark::DoNotOptimize(loom::layer_norm(x, {kCols}, w, b));
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(loom_layer_norm_4096x1024)->UseRealTime();

}  // namespace
