// layer_norm over the trailing dims (docs/kernel_conventions.md, "Nn").
// Registered CONTIGUOUS_ONLY: the core hands over contiguous input, weight
// and bias, so a row is N consecutive elements.
//
// Each row is read into L1 once and then swept three times there: the mean,
// the centred sum of squares (two-pass, so no cancellation), and the
// normalised, scaled and shifted output. float32 and the 16-bit floats
// accumulate in float (16-bit rows go through a float buffer), float64 in
// double. Rows are independent and split across threads.
#include "common.hpp"
#include "kernels.hpp"
#include "nn.hpp"
#include "nn_math.hpp"
#include "nn_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace loom::cpu {
namespace {

template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Mean and 1/sqrt(var + eps) (biased variance, as PyTorch) of one row.
template <int B, class C>
[[gnu::always_inline]] inline void stats(const C* x, int64_t n, C eps, C& mean, C& rstd) {
  if constexpr (std::is_same_v<C, float>) {
    mean = nnmath::sum_span<B>(x, n) / static_cast<float>(n);
    rstd = 1.0f / std::sqrt(nnmath::sq_dev_span<B>(x, n, mean) / static_cast<float>(n) + eps);
  } else {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += x[i];
    mean = s / static_cast<double>(n);
    double q = 0;
    for (int64_t i = 0; i < n; ++i) q += (x[i] - mean) * (x[i] - mean);
    rstd = 1.0 / std::sqrt(q / static_cast<double>(n) + eps);
  }
}

// y = (x - mean) * rstd * w + b over one row; w, b may be null.
template <int B, class C>
[[gnu::always_inline]] inline void norm_row_body(const C* x, C* y, int64_t n, const C* w, const C* b, C eps) {
  C mean, rstd;
  stats<B>(x, n, eps, mean, rstd);
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

template <class C>
LOOM_NN_TARGET(LOOM_NN_AVX512) void norm_row_512(const C* x, C* y, int64_t n, const C* w, const C* b, C eps) {
  norm_row_body<64>(x, y, n, w, b, eps);
}
template <class C>
LOOM_NN_TARGET(LOOM_NN_AVX2) void norm_row_256(const C* x, C* y, int64_t n, const C* w, const C* b, C eps) {
  norm_row_body<32>(x, y, n, w, b, eps);
}
template <class C>
void norm_row_128(const C* x, C* y, int64_t n, const C* w, const C* b, C eps) {
  norm_row_body<16>(x, y, n, w, b, eps);
}

// One row with the widest vectors the CPU has (chosen once per type).
template <class C>
void norm_row(const C* x, C* y, int64_t n, const C* w, const C* b, C eps) {
  static const auto fn = nnmath::pick_isa(&norm_row_512<C>, &norm_row_256<C>, &norm_row_128<C>);
  fn(x, y, n, w, b, eps);
}

// weight or bias in the compute type: the tensor itself for float and
// double, a widened copy for the 16-bit floats; null when absent.
template <class T>
const acc_t<T>* param(const LoomTensorDesc& t, std::vector<acc_t<T>>& copy, int64_t n) {
  if (plugin::is_absent(t)) return nullptr;
  const T* p = plugin::data_ptr<const T>(t);
  if constexpr (std::is_same_v<T, acc_t<T>>) {
    return p;
  } else {
    copy.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) copy[i] = static_cast<float>(p[i]);
    return copy.data();
  }
}

template <class T>
void layer_norm_typed(const LoomKernelCall& c, int64_t rows, int64_t n, double eps) {
  using C = acc_t<T>;
  const T* x = plugin::data_ptr<const T>(c.inputs[0]);
  T* y = plugin::data_ptr<T>(c.outputs[0]);
  std::vector<C> wcopy, bcopy;
  const C* w = param<T>(c.inputs[1], wcopy, n);
  const C* b = param<T>(c.inputs[2], bcopy, n);
  const C e = static_cast<C>(eps);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
  parallel_chunks(rows, grain, [&](int64_t r0, int64_t r1) {
    if constexpr (std::is_same_v<T, C>) {
      for (int64_t r = r0; r < r1; ++r) norm_row(x + r * n, y + r * n, n, w, b, e);
    } else {
      std::vector<float> buf(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<float>(x[r * n + i]);
        norm_row(buf.data(), buf.data(), n, w, b, e);
        for (int64_t i = 0; i < n; ++i) y[r * n + i] = plugin::cast<T>(buf[i]);
      }
    }
  });
}

}  // namespace

void layer_norm(const LoomKernelCall& c) {
  expect_arity(c, "layer_norm", 3, 1);
  expect_values(c, "layer_norm", 2);
  const LoomTensorDesc& in = c.inputs[0];
  expect_like(in, c.outputs[0], "layer_norm");
  const LoomValue& shape = c.values[0];
  if (shape.kind != LOOM_VALUE_INT_LIST || shape.u.ints.size > in.ndim) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu layer_norm: normalized_shape must be an int list of at most %d dims",
         in.ndim);
  int64_t n = 1;
  for (int64_t i = 0; i < shape.u.ints.size; ++i) n *= shape.u.ints.data[i];
  for (int i = 1; i < 3; ++i) {
    const LoomTensorDesc& p = c.inputs[i];
    if (!plugin::is_absent(p) && (plugin::numel(p) != n || p.dtype != in.dtype)) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu layer_norm: %s must have %lld elements of dtype %s",
           i == 1 ? "weight" : "bias", static_cast<long long>(n), plugin::dtype_name(in.dtype));
  }
  const int64_t total = plugin::numel(in);
  if (total == 0 || n == 0) return;
  const double eps = plugin::value_float(c, 1);
  dispatch<DTypes::Floating>(in.dtype, "layer_norm", [&](auto tag) {
    layer_norm_typed<decltype(tag)>(c, total / n, n, eps);
  });
}

void register_layer_norm_kernels(plugin::Registrar& r) {
  // Contiguous rows make the statistics one vector sweep; the core copies
  // the rare strided input.
  r.kernel("layer_norm", "cpu", plugin::kernel<layer_norm>, kFloatingMask, LOOM_KERNEL_CONTIGUOUS_ONLY);
}

}  // namespace loom::cpu
