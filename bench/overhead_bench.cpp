// overhead_bench.cpp — what one tiny op costs through the whole stack:
// C++ call -> dispatcher -> plugin ABI -> kernel, plus the output allocation.
// The libtorch peer (libtorch_peer.cpp) registers the same calls when built
// in, and ratio_reporter prints peer / loom for each pair.
#include <benchmark/benchmark.h>
#include <loom/loom.h>

namespace {

void loom_add_1elem_cpu(benchmark::State& state) {
  auto a = loom::ones({1});
  auto b = loom::ones({1});
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
}
BENCHMARK(loom_add_1elem_cpu);

// sim's own add kernel: the same dispatch path into an out-of-tree plugin.
void loom_add_1elem_sim(benchmark::State& state) {
  loom::Device sim("sim");
  auto a = loom::ones({1}).to(sim);
  auto b = loom::ones({1}).to(sim);
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
}
BENCHMARK(loom_add_1elem_sim);

void loom_empty_16(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(loom::empty({16}));
}
BENCHMARK(loom_empty_16);

// Larger adds, where the kernel (not the dispatch) dominates.
void loom_add_cpu(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = loom::ones({n});
  auto b = loom::ones({n});
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
  state.SetBytesProcessed(state.iterations() * n * 4 * 3);
}
BENCHMARK(loom_add_cpu)->Arg(1 << 16)->Arg(1 << 22);

void loom_matmul_cpu(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = loom::rand({n, n});
  auto b = loom::rand({n, n});
  for (auto _ : state) benchmark::DoNotOptimize(a.matmul(b));
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(loom_matmul_cpu)->Arg(64)->Arg(512);

}  // namespace
