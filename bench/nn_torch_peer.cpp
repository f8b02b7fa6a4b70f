// nn_torch_peer.cpp — nn_bench.cpp's calls through libtorch 1.13 (Debian,
// CPU), in the same process, for the ratio reporter.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

namespace {

constexpr int64_t kRows = 4096, kCols = 1024;
constexpr int64_t kBytes = kRows * kCols * 4 * 2;

void torch_softmax_4096x1024(benchmark::State& state) {
  const at::Tensor x = at::randn({kRows, kCols});
  for (auto _ : state) benchmark::DoNotOptimize(at::softmax(x, 1));
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(torch_softmax_4096x1024)->UseRealTime();

void torch_softmax_dim0_4096x1024(benchmark::State& state) {
  const at::Tensor x = at::randn({kRows, kCols});
  for (auto _ : state) benchmark::DoNotOptimize(at::softmax(x, 0));
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(torch_softmax_dim0_4096x1024)->UseRealTime();

void torch_log_softmax_4096x1024(benchmark::State& state) {
  const at::Tensor x = at::randn({kRows, kCols});
  for (auto _ : state) benchmark::DoNotOptimize(at::log_softmax(x, 1));
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(torch_log_softmax_4096x1024)->UseRealTime();

void torch_layer_norm_4096x1024(benchmark::State& state) {
  const at::Tensor x = at::randn({kRows, kCols});
  const at::Tensor w = at::randn({kCols}), b = at::randn({kCols});
  for (auto _ : state) benchmark::DoNotOptimize(at::layer_norm(x, {kCols}, w, b));
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(torch_layer_norm_4096x1024)->UseRealTime();

}  // namespace
