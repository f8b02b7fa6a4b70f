// layer_norm and rms_norm over the trailing dims (docs/kernel_conventions.md,
// "Nn"). Registered CONTIGUOUS_ONLY: the core hands over contiguous input,
// weight and bias, so a row is N consecutive elements.
//
// Each row is read into L1 once and then swept there: the mean (layer_norm
// only), the centred sum of squares, and the normalised, scaled and shifted
// output (nn_norm.hpp has the statistics). Rows are independent and split
// across threads. The gradient ops are nn_norm_backward.cpp's.
#include "kernels.hpp"
#include "nn.hpp"
#include "nn_norm.hpp"
#include "nn_parallel.hpp"

#include <algorithm>

namespace loom::cpu {
namespace {

using norm::acc_t;

// y = (x - mean) * rstd * w + b over one row; w, b may be null.
template <int B, bool Centred, class C>
[[gnu::always_inline]] inline void norm_row_body(const C* x, C* y, int64_t n, const C* w, const C* b, C eps) {
  C mean, rstd;
  norm::row_stats<B, Centred>(x, n, eps, mean, rstd);
  if (w && b) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * w[i] + b[i];
  } else if (w) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * w[i];
  } else if (b) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd + b[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd;
  }
}

template <bool Centred, class C>
LOOM_NN_TARGET(LOOM_NN_AVX512) void norm_row_512(const C* x, C* y, int64_t n, const C* w, const C* b, C eps) {
  norm_row_body<64, Centred>(x, y, n, w, b, eps);
}
template <bool Centred, class C>
LOOM_NN_TARGET(LOOM_NN_AVX2) void norm_row_256(const C* x, C* y, int64_t n, const C* w, const C* b, C eps) {
  norm_row_body<32, Centred>(x, y, n, w, b, eps);
}
template <bool Centred, class C>
void norm_row_128(const C* x, C* y, int64_t n, const C* w, const C* b, C eps) {
  norm_row_body<16, Centred>(x, y, n, w, b, eps);
}

// One row with the widest vectors the CPU has (chosen once per type).
template <bool Centred, class C>
void norm_row(const C* x, C* y, int64_t n, const C* w, const C* b, C eps) {
  static const auto fn =
      nnmath::pick_isa(&norm_row_512<Centred, C>, &norm_row_256<Centred, C>, &norm_row_128<Centred, C>);
  fn(x, y, n, w, b, eps);
}

// inputs (x, weight, bias) when Centred (layer_norm), (x, weight) otherwise.
template <bool Centred, class T>
void norm_typed(const LoomKernelCall& c, int64_t rows, int64_t n, double eps) {
  using C = acc_t<T>;
  const T* x = plugin::data_ptr<const T>(c.inputs[0]);
  T* y = plugin::data_ptr<T>(c.outputs[0]);
  std::vector<C> wcopy, bcopy;
  const C* w = norm::param<T>(c.inputs[1], wcopy, n);
  const C* b = Centred ? norm::param<T>(c.inputs[2], bcopy, n) : nullptr;
  const C e = static_cast<C>(eps);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
  parallel_chunks(rows, grain, [&](int64_t r0, int64_t r1) {
    if constexpr (std::is_same_v<T, C>) {
      for (int64_t r = r0; r < r1; ++r) norm_row<Centred>(x + r * n, y + r * n, n, w, b, e);
    } else {
      std::vector<float> buf(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<float>(x[r * n + i]);
        norm_row<Centred>(buf.data(), buf.data(), n, w, b, e);
        for (int64_t i = 0; i < n; ++i) y[r * n + i] = plugin::cast<T>(buf[i]);
      }
    }
  });
}

// layer_norm (Centred: inputs x, weight, bias) or rms_norm (x, weight);
// values (normalized_shape, eps).
template <bool Centred>
void norm_kernel(const LoomKernelCall& c) {
  constexpr const char* op = Centred ? "layer_norm" : "rms_norm";
  constexpr int params = Centred ? 2 : 1;
  expect_arity(c, op, 1 + params, 1);
  expect_values(c, op, 2);
  const LoomTensorDesc& in = c.inputs[0];
  expect_like(in, c.outputs[0], op);
  const int64_t n = norm::row_length(c, op, in, 1, params);
  const int64_t total = plugin::numel(in);
  if (total == 0 || n == 0) return;
  const double eps = plugin::value_float(c, 1);
  dispatch<DTypes::Floating>(in.dtype, op, [&](auto tag) {
    norm_typed<Centred, decltype(tag)>(c, total / n, n, eps);
  });
}

}  // namespace

void layer_norm(const LoomKernelCall& c) { norm_kernel<true>(c); }
void rms_norm(const LoomKernelCall& c) { norm_kernel<false>(c); }

void register_layer_norm_kernels(plugin::Registrar& r) {
  // Contiguous rows make the statistics one vector sweep; the core copies
  // the rare strided input.
  r.kernel("layer_norm", "cpu", plugin::kernel<layer_norm>, kFloatingMask, LOOM_KERNEL_CONTIGUOUS_ONLY);
  r.kernel("rms_norm", "cpu", plugin::kernel<rms_norm>, kFloatingMask, LOOM_KERNEL_CONTIGUOUS_ONLY);
  r.kernel("_layer_norm_backward", "cpu", plugin::kernel<layer_norm_backward>, kFloatingMask,
           LOOM_KERNEL_CONTIGUOUS_ONLY);
  r.kernel("_rms_norm_backward", "cpu", plugin::kernel<rms_norm_backward>, kFloatingMask,
           LOOM_KERNEL_CONTIGUOUS_ONLY);
}

}  // namespace loom::cpu
