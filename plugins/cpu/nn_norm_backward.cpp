// _layer_norm_backward and _rms_norm_backward (docs/kernel_conventions.md,
// "Nn"; core/src/ops/ops_nn_norm.cpp has the composites these match):
// inputs (grad_output, input, weight), values (normalized_shape, eps);
// outputs grad_input, the weight's gradient and (layer_norm) the bias's.
// Registered CONTIGUOUS_ONLY, so a row is N consecutive elements.
//
// One pass over the rows, each swept in L1: its statistics (recomputed, as
// the composite does), Σ g·w and Σ g·w·(x - mean), then grad_input and the
// row's terms of the parameters' sums. Rows are split into one fixed block
// per thread, each with its own partial sums, added in block order at the
// end — the same result for a given thread count, whatever the scheduling.
#include "kernels.hpp"
#include "nn.hpp"
#include "nn_norm.hpp"

#include <algorithm>
#include <vector>

namespace loom::cpu {
namespace {

using norm::acc_t;

// The row's grad_input into dx, and its terms added to gw (Σ g·x̂) and, for
// layer_norm, gb (Σ g). With x̂ = (x - mean)·rstd and h = g·w:
// dx = rstd·(h - mean(h) - x̂·mean(h·x̂)); rms_norm has no mean(h) term.
// `tmp` holds n values.
template <int B, bool Centred, class C>
[[gnu::always_inline]] inline void backward_row(const C* g, const C* x, C* dx, int64_t n, const C* w, C eps, C* gw,
                                                C* gb, C* tmp) {
  C mean, rstd;
  norm::row_stats<B, Centred>(x, n, eps, mean, rstd);
  const C* h = g;
  if (w) {
    for (int64_t i = 0; i < n; ++i) tmp[i] = g[i] * w[i];
    h = tmp;
  }
  C sum_h = 0, sum_hx = 0;  // Σ h, Σ h·(x - mean)
  if constexpr (std::is_same_v<C, float>) {
    nnmath::grad_sums_span<B>(h, x, n, mean, sum_h, sum_hx);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      sum_h += h[i];
      sum_hx += h[i] * (x[i] - mean);
    }
  }
  const C inv_n = C(1) / static_cast<C>(n);
  const C k_mean = Centred ? sum_h * inv_n : C(0);
  const C k_x = sum_hx * rstd * rstd * inv_n;
  for (int64_t i = 0; i < n; ++i) dx[i] = rstd * (h[i] - k_mean - (x[i] - mean) * k_x);
  for (int64_t i = 0; i < n; ++i) gw[i] += g[i] * ((x[i] - mean) * rstd);
  if constexpr (Centred)
    for (int64_t i = 0; i < n; ++i) gb[i] += g[i];
}

// The rows [r0, r1) of one block.
template <class C>
struct Rows {
  const C *g, *x, *w;
  C* dx;
  int64_t n;
  C eps;
};

template <int B, bool Centred, class C>
[[gnu::always_inline]] inline void backward_rows_body(const Rows<C>& a, int64_t r0, int64_t r1, C* gw, C* gb, C* tmp) {
  for (int64_t r = r0; r < r1; ++r)
    backward_row<B, Centred>(a.g + r * a.n, a.x + r * a.n, a.dx + r * a.n, a.n, a.w, a.eps, gw, gb, tmp);
}

template <bool Centred, class C>
LOOM_NN_TARGET(LOOM_NN_AVX512) void backward_rows_512(const Rows<C>& a, int64_t r0, int64_t r1, C* gw, C* gb, C* t) {
  backward_rows_body<64, Centred>(a, r0, r1, gw, gb, t);
}
template <bool Centred, class C>
LOOM_NN_TARGET(LOOM_NN_AVX2) void backward_rows_256(const Rows<C>& a, int64_t r0, int64_t r1, C* gw, C* gb, C* t) {
  backward_rows_body<32, Centred>(a, r0, r1, gw, gb, t);
}
template <bool Centred, class C>
void backward_rows_128(const Rows<C>& a, int64_t r0, int64_t r1, C* gw, C* gb, C* t) {
  backward_rows_body<16, Centred>(a, r0, r1, gw, gb, t);
}

template <bool Centred, class C>
void backward_rows(const Rows<C>& a, int64_t r0, int64_t r1, C* gw, C* gb, C* tmp) {
  static const auto fn = nnmath::pick_isa(&backward_rows_512<Centred, C>, &backward_rows_256<Centred, C>,
                                          &backward_rows_128<Centred, C>);
  fn(a, r0, r1, gw, gb, tmp);
}

// The 16-bit floats: each block widens its rows into float buffers first.
template <bool Centred, class T>
void backward_block(const LoomKernelCall& c, const Rows<acc_t<T>>& wide, int64_t r0, int64_t r1, acc_t<T>* gw,
                    acc_t<T>* gb, acc_t<T>* tmp) {
  using C = acc_t<T>;
  if constexpr (std::is_same_v<T, C>) {
    backward_rows<Centred>(wide, r0, r1, gw, gb, tmp);
  } else {
    const int64_t n = wide.n;
    const T* g = plugin::data_ptr<const T>(c.inputs[0]);
    const T* x = plugin::data_ptr<const T>(c.inputs[1]);
    T* dx = plugin::data_ptr<T>(c.outputs[0]);
    std::vector<float> gbuf(static_cast<size_t>(n)), xbuf(gbuf.size()), dbuf(gbuf.size());
    const Rows<float> row{gbuf.data(), xbuf.data(), wide.w, dbuf.data(), n, wide.eps};
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t i = 0; i < n; ++i) {
        gbuf[i] = static_cast<float>(g[r * n + i]);
        xbuf[i] = static_cast<float>(x[r * n + i]);
      }
      backward_rows<Centred>(row, 0, 1, gw, gb, tmp);
      for (int64_t i = 0; i < n; ++i) dx[r * n + i] = plugin::cast<T>(dbuf[i]);
    }
  }
}

template <bool Centred, class T>
void backward_typed(const LoomKernelCall& c, int64_t rows, int64_t n, double eps) {
  using C = acc_t<T>;
  std::vector<C> wcopy;
  Rows<C> a{};
  if constexpr (std::is_same_v<T, C>) {
    a.g = plugin::data_ptr<const T>(c.inputs[0]);
    a.x = plugin::data_ptr<const T>(c.inputs[1]);
    a.dx = plugin::data_ptr<T>(c.outputs[0]);
  }
  a.w = norm::param<T>(c.inputs[2], wcopy, n);
  a.n = n;
  a.eps = static_cast<C>(eps);
  // One block per thread, at least kParallelGrain elements each.
  const int64_t blocks =
      omp_in_parallel() ? 1 : std::clamp<int64_t>(rows * n / kParallelGrain, 1, std::min<int64_t>(max_threads(), rows));
  const size_t per_block = static_cast<size_t>(n) * (Centred ? 3 : 2);  // gw, [gb,] tmp
  std::vector<C> parts(static_cast<size_t>(blocks) * per_block, C(0));
  auto run = [&](int64_t b) {
    C* gw = parts.data() + static_cast<size_t>(b) * per_block;
    C* gb = Centred ? gw + n : nullptr;
    C* tmp = gw + (Centred ? 2 : 1) * n;
    backward_block<Centred, T>(c, a, rows * b / blocks, rows * (b + 1) / blocks, gw, gb, tmp);
  };
  if (blocks == 1) {
    run(0);
  } else {
    RegionError error;
#pragma omp parallel for num_threads(static_cast<int>(blocks)) schedule(static, 1)
    for (int64_t b = 0; b < blocks; ++b) error.run([&] { run(b); });
    error.rethrow();
  }
  // The blocks' sums, in block order.
  for (int out = 1; out < (Centred ? 3 : 2); ++out) {
    T* p = plugin::data_ptr<T>(c.outputs[out]);
    for (int64_t i = 0; i < n; ++i) {
      C s = 0;
      for (int64_t b = 0; b < blocks; ++b) s += parts[static_cast<size_t>(b) * per_block + (out - 1) * n + i];
      p[i] = plugin::cast<T>(s);
    }
  }
}

template <bool Centred>
void norm_backward_kernel(const LoomKernelCall& c) {
  constexpr const char* op = Centred ? "_layer_norm_backward" : "_rms_norm_backward";
  constexpr int params = Centred ? 2 : 1;
  expect_arity(c, op, 3, 1 + params);
  expect_values(c, op, 2);
  const LoomTensorDesc& in = c.inputs[1];
  expect_like(c.inputs[0], in, op);
  expect_like(in, c.outputs[0], op);
  const int64_t n = norm::row_length(c, op, in, 2, 1);
  for (int i = 1; i <= params; ++i)
    if (plugin::numel(c.outputs[i]) != n || c.outputs[i].dtype != in.dtype) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: output %d must have %lld elements of dtype %s", op, i,
           static_cast<long long>(n), plugin::dtype_name(in.dtype));
  if (n == 0) return;
  const int64_t rows = plugin::numel(in) / n;
  const double eps = plugin::value_float(c, 1);
  dispatch<DTypes::Floating>(in.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0) {  // no rows: the parameters' sums are 0
      for (int i = 1; i <= params; ++i) std::fill_n(plugin::data_ptr<T>(c.outputs[i]), n, plugin::cast<T>(0.0));
      return;
    }
    backward_typed<Centred, T>(c, rows, n, eps);
  });
}

}  // namespace

void layer_norm_backward(const LoomKernelCall& c) { norm_backward_kernel<true>(c); }
void rms_norm_backward(const LoomKernelCall& c) { norm_backward_kernel<false>(c); }

}  // namespace loom::cpu
