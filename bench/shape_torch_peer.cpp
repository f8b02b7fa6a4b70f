// shape_torch_peer.cpp — shape_bench.cpp's calls through libtorch 1.13 (CPU),
// same sizes, same process; names mirror it with "torch_" for "loom_".
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <vector>

namespace {

void torch_cat_64x256x256_dim1(benchmark::State& state) {
  std::vector<at::Tensor> ts;
  for (int i = 0; i < 64; ++i) ts.push_back(at::rand({256, 256}));
  for (auto _ : state) benchmark::DoNotOptimize(at::cat(ts, 1));
  state.SetBytesProcessed(state.iterations() * 64 * 256 * 256 * 4 * 2);
}
BENCHMARK(torch_cat_64x256x256_dim1)->UseRealTime();

void torch_cat_1000x16(benchmark::State& state) {
  std::vector<at::Tensor> ts;
  for (int i = 0; i < 1000; ++i) ts.push_back(at::rand({16}));
  for (auto _ : state) benchmark::DoNotOptimize(at::cat(ts));
}
BENCHMARK(torch_cat_1000x16)->UseRealTime();

void torch_flip_2048x2048(benchmark::State& state) {
  auto a = at::rand({2048, 2048});
  for (auto _ : state) benchmark::DoNotOptimize(at::flip(a, {0, 1}));
  state.SetBytesProcessed(state.iterations() * 2048 * 2048 * 4 * 2);
}
BENCHMARK(torch_flip_2048x2048)->UseRealTime();

void torch_roll_2048x2048(benchmark::State& state) {
  auto a = at::rand({2048, 2048});
  for (auto _ : state) benchmark::DoNotOptimize(at::roll(a, {3, -5}, {0, 1}));
  state.SetBytesProcessed(state.iterations() * 2048 * 2048 * 4 * 2);
}
BENCHMARK(torch_roll_2048x2048)->UseRealTime();

void torch_tril_2048x2048(benchmark::State& state) {
  auto a = at::rand({2048, 2048});
  for (auto _ : state) benchmark::DoNotOptimize(at::tril(a));
  state.SetBytesProcessed(state.iterations() * 2048 * 2048 * 4 * 2);
}
BENCHMARK(torch_tril_2048x2048)->UseRealTime();

void torch_sort_1024x1024(benchmark::State& state) {
  auto a = at::rand({1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(at::sort(a));
}
BENCHMARK(torch_sort_1024x1024)->UseRealTime();

void torch_topk10_1024x4096(benchmark::State& state) {
  auto a = at::rand({1024, 4096});
  for (auto _ : state) benchmark::DoNotOptimize(at::topk(a, 10));
}
BENCHMARK(torch_topk10_1024x4096)->UseRealTime();

}  // namespace
