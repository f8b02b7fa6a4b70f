// bandwidth_bench.cpp — memory-bound elementwise work against the machine's
// own limit: a STREAM-style triad (a = b + s*c, OpenMP, same threads) on the
// same sizes, in the same run. Bytes counted as STREAM does (2 reads, 1 write).
#include <benchmark/benchmark.h>
#include <loom/loom.h>

#include <omp.h>

#include <cstdlib>
#include <memory>

namespace {

constexpr int64_t kN = int64_t{1} << 24;  // 16M float32: 192 MiB moved per pass

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], AlignedFree>;
Buffer buffer(int64_t n, float v) {
  auto* p = static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(n) * sizeof(float)));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) p[i] = v;  // first touch by the threads that use it
  return Buffer(p);
}

void stream_add_16M(benchmark::State& state) {
  Buffer a = buffer(kN, 0), b = buffer(kN, 1), c = buffer(kN, 2);
  const float s = 1.0f;
  for (auto _ : state) {
    float* __restrict pa = a.get();
    const float* __restrict pb = b.get();
    const float* __restrict pc = c.get();
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < kN; ++i) pa[i] = pb[i] + s * pc[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kN * 12);
}
BENCHMARK(stream_add_16M)->UseRealTime();

// loom's add into a preallocated output would be add(out=); until out=
// exists, the allocation is part of what a user pays and is measured too.
void loom_add_16M(benchmark::State& state) {
  auto b = loom::ones({kN});
  auto c = loom::full({kN}, 2.0);
  for (auto _ : state) benchmark::DoNotOptimize(b + c);
  state.SetBytesProcessed(state.iterations() * kN * 12);
}
BENCHMARK(loom_add_16M)->UseRealTime();

void loom_inplace_add_16M(benchmark::State& state) {
  auto a = loom::ones({kN});
  auto c = loom::full({kN}, 2.0);
  for (auto _ : state) a.add_(c);
  state.SetBytesProcessed(state.iterations() * kN * 12);
}
BENCHMARK(loom_inplace_add_16M)->UseRealTime();

void loom_sum_16M(benchmark::State& state) {
  auto a = loom::ones({kN});
  for (auto _ : state) benchmark::DoNotOptimize(a.sum());
  state.SetBytesProcessed(state.iterations() * kN * 4);
}
BENCHMARK(loom_sum_16M)->UseRealTime();

// One row per family the shared op tables and scalar semantics serve
// (plugin_api/loom/plugin/elementwise_ops.h, scalar_ops.hpp): a binary
// extremum with NaN rules, a comparison with a bool output, a float unary and
// a Welford reduction. Bytes: inputs read plus the output written.
void loom_maximum_16M(benchmark::State& state) {
  auto b = loom::ones({kN});
  auto c = loom::full({kN}, 2.0);
  for (auto _ : state) benchmark::DoNotOptimize(loom::maximum(b, c));
  state.SetBytesProcessed(state.iterations() * kN * 12);
}
BENCHMARK(loom_maximum_16M)->UseRealTime();

void loom_lt_16M(benchmark::State& state) {
  auto b = loom::ones({kN});
  auto c = loom::full({kN}, 2.0);
  for (auto _ : state) benchmark::DoNotOptimize(loom::lt(b, c));
  state.SetBytesProcessed(state.iterations() * kN * 9);
}
BENCHMARK(loom_lt_16M)->UseRealTime();

void loom_sigmoid_16M(benchmark::State& state) {
  auto a = loom::full({kN}, 0.5);
  for (auto _ : state) benchmark::DoNotOptimize(loom::sigmoid(a));
  state.SetBytesProcessed(state.iterations() * kN * 8);
}
BENCHMARK(loom_sigmoid_16M)->UseRealTime();

void loom_var_16M(benchmark::State& state) {
  auto a = loom::full({kN}, 0.5);
  for (auto _ : state) benchmark::DoNotOptimize(a.var());
  state.SetBytesProcessed(state.iterations() * kN * 4);
}
BENCHMARK(loom_var_16M)->UseRealTime();

}  // namespace
