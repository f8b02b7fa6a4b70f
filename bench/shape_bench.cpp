// shape_bench.cpp — the shape family's kernels (cat, flip, roll, tril, sort,
// topk) on mid-size float32 tensors. Peers with the same names and
// "torch_" in place of "loom_" are in shape_torch_peer.cpp.
#include <benchmark/benchmark.h>
#include <loom/loom.h>

#include <vector>

namespace {

// 64 tensors of [256, 256] joined along dim 1: strided writes, 16 MiB out.
void loom_cat_64x256x256_dim1(benchmark::State& state) {
  std::vector<loom::Tensor> ts;
  for (int i = 0; i < 64; ++i) ts.push_back(loom::rand({256, 256}));
  for (auto _ : state) benchmark::DoNotOptimize(loom::cat(ts, 1));
  state.SetBytesProcessed(state.iterations() * 64 * 256 * 256 * 4 * 2);
}
BENCHMARK(loom_cat_64x256x256_dim1)->UseRealTime();

// 1000 small tensors: per-input overhead.
void loom_cat_1000x16(benchmark::State& state) {
  std::vector<loom::Tensor> ts;
  for (int i = 0; i < 1000; ++i) ts.push_back(loom::rand({16}));
  for (auto _ : state) benchmark::DoNotOptimize(loom::cat(ts));
}
BENCHMARK(loom_cat_1000x16)->UseRealTime();

void loom_flip_2048x2048(benchmark::State& state) {
  auto a = loom::rand({2048, 2048});
  for (auto _ : state) benchmark::DoNotOptimize(loom::flip(a, {0, 1}));
  state.SetBytesProcessed(state.iterations() * 2048 * 2048 * 4 * 2);
}
BENCHMARK(loom_flip_2048x2048)->UseRealTime();

void loom_roll_2048x2048(benchmark::State& state) {
  auto a = loom::rand({2048, 2048});
  for (auto _ : state) benchmark::DoNotOptimize(loom::roll(a, {3, -5}, {0, 1}));
  state.SetBytesProcessed(state.iterations() * 2048 * 2048 * 4 * 2);
}
BENCHMARK(loom_roll_2048x2048)->UseRealTime();

void loom_tril_2048x2048(benchmark::State& state) {
  auto a = loom::rand({2048, 2048});
  for (auto _ : state) benchmark::DoNotOptimize(loom::tril(a));
  state.SetBytesProcessed(state.iterations() * 2048 * 2048 * 4 * 2);
}
BENCHMARK(loom_tril_2048x2048)->UseRealTime();

void loom_sort_1024x1024(benchmark::State& state) {
  auto a = loom::rand({1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(loom::sort(a));
}
BENCHMARK(loom_sort_1024x1024)->UseRealTime();

void loom_topk10_1024x4096(benchmark::State& state) {
  auto a = loom::rand({1024, 4096});
  for (auto _ : state) benchmark::DoNotOptimize(loom::topk(a, 10));
}
BENCHMARK(loom_topk10_1024x4096)->UseRealTime();

}  // namespace
