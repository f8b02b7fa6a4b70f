// matmul_bench.cpp — loom's matmul against oneDNN's own dnnl_sgemm on the
// same square matrices (the bar: >= 0.95x), and bf16 against f32.
// Names pair as loom_X / dnnl_X for the ratio reporter.
#include <benchmark/benchmark.h>
#include <loom/loom.h>
#include <oneapi/dnnl/dnnl.h>

#include <vector>

namespace {

void flops(benchmark::State& state, int64_t n) {
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void loom_sgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = loom::rand({n, n});
  auto b = loom::rand({n, n});
  for (auto _ : state) benchmark::DoNotOptimize(loom::mm(a, b));
  flops(state, n);
}
BENCHMARK(loom_sgemm)->Arg(1024)->Arg(2048)->UseRealTime();

// What loom's output allocation adds is part of loom's cost; dnnl_sgemm
// writes a preallocated C, so give it a fresh one per call too.
void dnnl_sgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f);
  for (auto _ : state) {
    std::vector<float> c(static_cast<size_t>(n * n));
    ::dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  flops(state, n);
}
BENCHMARK(dnnl_sgemm)->Arg(1024)->Arg(2048)->UseRealTime();

// Same call site as a preallocated C: the GEMM alone.
void loom_sgemm_out(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = loom::rand({n, n});
  auto b = loom::rand({n, n});
  auto c = loom::empty({n, n});
  for (auto _ : state) benchmark::DoNotOptimize(loom::mm_out(c, a, b));
  flops(state, n);
}
BENCHMARK(loom_sgemm_out)->Arg(1024)->Arg(2048)->UseRealTime();

void dnnl_sgemm_out(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  for (auto _ : state) {
    ::dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  flops(state, n);
}
BENCHMARK(dnnl_sgemm_out)->Arg(1024)->Arg(2048)->UseRealTime();

void loom_bf16_gemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = loom::rand({n, n}).to(loom::DType::BFloat16);
  auto b = loom::rand({n, n}).to(loom::DType::BFloat16);
  for (auto _ : state) benchmark::DoNotOptimize(loom::mm(a, b));
  flops(state, n);
}
BENCHMARK(loom_bf16_gemm)->Arg(1024)->Arg(2048)->UseRealTime();

}  // namespace
