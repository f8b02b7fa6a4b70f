// _softmax_backward and _log_softmax_backward (docs/kernel_conventions.md,
// "Nn"; core/src/ops/ops_nn.cpp has the composites these match): inputs
// grad_output g and the forward's result y (one shape and dtype), values[0]
// the dim; softmax: y·(g − Σ g·y), log_softmax: g − exp(y)·Σ g, the sums
// along dim. Registered CONTIGUOUS_ONLY (a gradient is often a broadcast),
// so the data is [outer, n, inner]:
//  - rows (inner = 1): the sum, then the result, over a row in L1;
//  - columns: the sums of a whole [n, inner] block accumulate in a buffer
//    of inner values, the loops running across it, so they vectorise.
// float32 and the 16-bit floats compute in float, float64 in double.
#include "common.hpp"
#include "kernels.hpp"
#include "loops.hpp"  // LOOM_CPU_CLONES
#include "nn.hpp"
#include "nn_dims.hpp"
#include "nn_math.hpp"
#include "nn_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace loom::cpu {
namespace {

using nnmath::acc_t;

// One float row: the sum with nn_math's vector spans.
template <bool Log, int B>
[[gnu::always_inline]] inline void row_f32_body(const float* g, const float* y, float* dx, int64_t n) {
  float sum_g, sum_gy;
  nnmath::grad_sums_span<B>(g, y, n, 0.0f, sum_g, sum_gy);
  if constexpr (Log) {
    for (int64_t i = 0; i < n; ++i) dx[i] = g[i] - std::exp(y[i]) * sum_g;
  } else {
    for (int64_t i = 0; i < n; ++i) dx[i] = y[i] * (g[i] - sum_gy);
  }
}

template <bool Log>
LOOM_NN_TARGET(LOOM_NN_AVX512) void row_f32_512(const float* g, const float* y, float* dx, int64_t n) {
  row_f32_body<Log, 64>(g, y, dx, n);
}
template <bool Log>
LOOM_NN_TARGET(LOOM_NN_AVX2) void row_f32_256(const float* g, const float* y, float* dx, int64_t n) {
  row_f32_body<Log, 32>(g, y, dx, n);
}
template <bool Log>
void row_f32_128(const float* g, const float* y, float* dx, int64_t n) {
  row_f32_body<Log, 16>(g, y, dx, n);
}

template <bool Log>
void row_f32(const float* g, const float* y, float* dx, int64_t n) {
  static const auto fn = nnmath::pick_isa(&row_f32_512<Log>, &row_f32_256<Log>, &row_f32_128<Log>);
  fn(g, y, dx, n);
}

template <bool Log>
void row_f64(const double* g, const double* y, double* dx, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += Log ? g[i] : g[i] * y[i];
  for (int64_t i = 0; i < n; ++i) dx[i] = Log ? g[i] - std::exp(y[i]) * s : y[i] * (g[i] - s);
}

// Contiguous rows: float and double as they are, 16-bit floats through
// float buffers.
template <bool Log, class T>
void rows_layout(const T* g, const T* y, T* dx, int64_t rows, int64_t n) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
  parallel_chunks(rows, grain, [&](int64_t r0, int64_t r1) {
    if constexpr (std::is_same_v<T, double>) {
      for (int64_t r = r0; r < r1; ++r) row_f64<Log>(g + r * n, y + r * n, dx + r * n, n);
    } else if constexpr (std::is_same_v<T, float>) {
      for (int64_t r = r0; r < r1; ++r) row_f32<Log>(g + r * n, y + r * n, dx + r * n, n);
    } else {
      std::vector<float> gb(static_cast<size_t>(n)), yb(gb.size()), db(gb.size());
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t i = 0; i < n; ++i) {
          gb[i] = static_cast<float>(g[r * n + i]);
          yb[i] = static_cast<float>(y[r * n + i]);
        }
        row_f32<Log>(gb.data(), yb.data(), db.data(), n);
        for (int64_t i = 0; i < n; ++i) dx[r * n + i] = plugin::cast<T>(db[i]);
      }
    }
  });
}

// One [n, inner] block: the sums of its inner columns in `sum`.
template <bool Log, class T>
[[gnu::flatten]] LOOM_CPU_CLONES void column_block(const T* g, const T* y, T* dx, int64_t n, int64_t inner,
                                                   acc_t<T>* sum) {
  using C = acc_t<T>;
  for (int64_t j = 0; j < inner; ++j) sum[j] = 0;
  for (int64_t r = 0; r < n; ++r) {
    const T *gr = g + r * inner, *yr = y + r * inner;
    for (int64_t j = 0; j < inner; ++j) sum[j] += Log ? static_cast<C>(gr[j]) : static_cast<C>(gr[j]) * static_cast<C>(yr[j]);
  }
  for (int64_t r = 0; r < n; ++r) {
    const T *gr = g + r * inner, *yr = y + r * inner;
    T* dr = dx + r * inner;
    for (int64_t j = 0; j < inner; ++j) {
      const C gv = static_cast<C>(gr[j]), yv = static_cast<C>(yr[j]);
      dr[j] = plugin::cast<T>(Log ? gv - std::exp(yv) * sum[j] : yv * (gv - sum[j]));
    }
  }
}

template <bool Log, class T>
void columns_layout(const T* g, const T* y, T* dx, int64_t outer, int64_t n, int64_t inner) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n * inner, 1));
  parallel_chunks(outer, grain, [&](int64_t o0, int64_t o1) {
    std::vector<acc_t<T>> sum(static_cast<size_t>(inner));
    for (int64_t o = o0; o < o1; ++o) {
      const int64_t off = o * n * inner;
      column_block<Log>(g + off, y + off, dx + off, n, inner, sum.data());
    }
  });
}

template <bool Log>
void softmax_backward_kernel(const LoomKernelCall& c) {
  constexpr const char* name = Log ? "_log_softmax_backward" : "_softmax_backward";
  expect_arity(c, name, 2, 1);
  expect_values(c, name, 1);
  const LoomTensorDesc& out = c.outputs[0];
  for (int i = 0; i < 2; ++i) expect_like(c.inputs[i], out, name);
  const AlongDim a = along_dim(c, out, name);
  if (plugin::numel(out) == 0) return;
  dispatch<DTypes::Floating>(out.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    const T* g = plugin::data_ptr<const T>(c.inputs[0]);
    const T* y = plugin::data_ptr<const T>(c.inputs[1]);
    T* dx = plugin::data_ptr<T>(out);
    if (a.inner == 1) rows_layout<Log>(g, y, dx, a.outer, a.n);
    else columns_layout<Log>(g, y, dx, a.outer, a.n, a.inner);
  });
}

}  // namespace

void softmax_backward(const LoomKernelCall& c) { softmax_backward_kernel<false>(c); }
void log_softmax_backward(const LoomKernelCall& c) { softmax_backward_kernel<true>(c); }

}  // namespace loom::cpu
