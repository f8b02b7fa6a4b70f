// libtorch_peer.cpp — the same calls through libtorch (Debian's 1.13, CPU),
// measured in the same process for an honest ratio. Names mirror
// overhead_bench.cpp with "torch_" in place of "loom_".
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

namespace {

void torch_add_1elem_cpu(benchmark::State& state) {
  auto a = at::ones({1});
  auto b = at::ones({1});
  for (auto _ : state) benchmark::DoNotOptimize(at::add(a, b));
}
BENCHMARK(torch_add_1elem_cpu);

void torch_empty_16(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(at::empty({16}));
}
BENCHMARK(torch_empty_16);

void torch_add_cpu(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = at::ones({n});
  auto b = at::ones({n});
  for (auto _ : state) benchmark::DoNotOptimize(at::add(a, b));
  state.SetBytesProcessed(state.iterations() * n * 4 * 3);
}
BENCHMARK(torch_add_cpu)->Arg(1 << 16)->Arg(1 << 22);

void torch_matmul_cpu(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = at::rand({n, n});
  auto b = at::rand({n, n});
  for (auto _ : state) benchmark::DoNotOptimize(at::matmul(a, b));
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(torch_matmul_cpu)->Arg(64)->Arg(512);

void torch_add_16M(benchmark::State& state) {
  const int64_t n = int64_t{1} << 24;
  auto b = at::ones({n});
  auto c = at::full({n}, 2.0);
  for (auto _ : state) benchmark::DoNotOptimize(at::add(b, c));
  state.SetBytesProcessed(state.iterations() * n * 12);
}
BENCHMARK(torch_add_16M)->UseRealTime();

void torch_sum_16M(benchmark::State& state) {
  const int64_t n = int64_t{1} << 24;
  auto a = at::ones({n});
  for (auto _ : state) benchmark::DoNotOptimize(a.sum());
  state.SetBytesProcessed(state.iterations() * n * 4);
}
BENCHMARK(torch_sum_16M)->UseRealTime();

void torch_maximum_16M(benchmark::State& state) {
  const int64_t n = int64_t{1} << 24;
  auto b = at::ones({n});
  auto c = at::full({n}, 2.0);
  for (auto _ : state) benchmark::DoNotOptimize(at::maximum(b, c));
  state.SetBytesProcessed(state.iterations() * n * 12);
}
BENCHMARK(torch_maximum_16M)->UseRealTime();

void torch_lt_16M(benchmark::State& state) {
  const int64_t n = int64_t{1} << 24;
  auto b = at::ones({n});
  auto c = at::full({n}, 2.0);
  for (auto _ : state) benchmark::DoNotOptimize(at::lt(b, c));
  state.SetBytesProcessed(state.iterations() * n * 9);
}
BENCHMARK(torch_lt_16M)->UseRealTime();

void torch_sigmoid_16M(benchmark::State& state) {
  const int64_t n = int64_t{1} << 24;
  auto a = at::full({n}, 0.5);
  for (auto _ : state) benchmark::DoNotOptimize(at::sigmoid(a));
  state.SetBytesProcessed(state.iterations() * n * 8);
}
BENCHMARK(torch_sigmoid_16M)->UseRealTime();

void torch_var_16M(benchmark::State& state) {
  const int64_t n = int64_t{1} << 24;
  auto a = at::full({n}, 0.5);
  for (auto _ : state) benchmark::DoNotOptimize(a.var());
  state.SetBytesProcessed(state.iterations() * n * 4);
}
BENCHMARK(torch_var_16M)->UseRealTime();

void torch_sgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = at::rand({n, n});
  auto b = at::rand({n, n});
  for (auto _ : state) benchmark::DoNotOptimize(at::mm(a, b));
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(torch_sgemm)->Arg(1024)->Arg(2048)->UseRealTime();

}  // namespace
