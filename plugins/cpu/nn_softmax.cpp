// softmax and log_softmax along one dim (docs/kernel_conventions.md, "Nn").
//
// Three layouts, each parallel over independent work:
//  - rows: input and output contiguous and dim the last non-trivial one;
//    each row is max, exp (stored and summed), scale: three passes over a
//    row that stays in L1.
//  - columns: contiguous with dim not innermost ([outer, n, inner]); a
//    tile of up to kTile columns runs the same passes down the n rows, the
//    lanes running across columns, so the loops vectorise without a gather.
//  - anything else (strided views): each line along dim is gathered into a
//    buffer, computed as a row, and scattered back.
// float32 runs the vector exp of nn_math.hpp; float16/bfloat16 compute in
// float through a buffer; float64 uses <cmath> in double.
#include "common.hpp"
#include "kernels.hpp"
#include "loops.hpp"
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

constexpr int64_t kTile = 64;  // columns per task in the column layout

using nnmath::acc_t;

// ------------------------------------------------------------ one row ---

// y = softmax(x) (or log_softmax) of one contiguous float row; y may be x.
template <bool Log, int B>
[[gnu::always_inline]] inline void row_f32_body(const float* x, float* y, int64_t n) {
  const float m = nnmath::max_span<B>(x, n);
  if constexpr (Log) {
    // The exponentials go to a block on the stack: y may be x, and x is
    // needed again for the result.
    constexpr int64_t kBlock = 256;
    float e[kBlock], s = 0;
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t len = std::min(kBlock, n - b);
      s += nnmath::exp_shift_sum<B>(x + b, e, len, m);
    }
    // (x - m) - log s: x - m is exact near the max, where m + log s
    // rounded first would lose the small result to the size of m.
    const float lg = std::log(s);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - lg;
  } else {
    const float inv = 1.0f / nnmath::exp_shift_sum<B>(x, y, n, m);
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

template <bool Log>
LOOM_NN_TARGET(LOOM_NN_AVX512) void row_f32_512(const float* x, float* y, int64_t n) { row_f32_body<Log, 64>(x, y, n); }
template <bool Log>
LOOM_NN_TARGET(LOOM_NN_AVX2) void row_f32_256(const float* x, float* y, int64_t n) { row_f32_body<Log, 32>(x, y, n); }
template <bool Log>
void row_f32_128(const float* x, float* y, int64_t n) { row_f32_body<Log, 16>(x, y, n); }

template <bool Log>
void row_f32(const float* x, float* y, int64_t n) {
  static const auto fn = nnmath::pick_isa(&row_f32_512<Log>, &row_f32_256<Log>, &row_f32_128<Log>);
  fn(x, y, n);
}

// The float64 row: libm's exp, so the result is as accurate as double allows.
template <bool Log>
void row_f64(const double* x, double* y, int64_t n) {
  double m = -HUGE_VAL;
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  double s = 0;
  if constexpr (Log) {
    for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - m);
    const double lg = std::log(s);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - lg;
  } else {
    for (int64_t i = 0; i < n; ++i) s += (y[i] = std::exp(x[i] - m));
    const double inv = 1.0 / s;
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

template <bool Log, class C>
void row(const C* x, C* y, int64_t n) {
  if constexpr (std::is_same_v<C, double>) row_f64<Log>(x, y, n);
  else row_f32<Log>(x, y, n);
}

// ------------------------------------------------------------ layouts ---

// Contiguous rows of n elements: float and double in place, 16-bit floats
// through a float buffer per thread.
template <bool Log, class T>
void rows_layout(const T* x, T* y, int64_t rows, int64_t n) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
  parallel_chunks(rows, grain, [&](int64_t r0, int64_t r1) {
    if constexpr (std::is_same_v<T, acc_t<T>>) {
      for (int64_t r = r0; r < r1; ++r) row<Log>(x + r * n, y + r * n, n);
    } else {
      std::vector<float> buf(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<float>(x[r * n + i]);
        row_f32<Log>(buf.data(), buf.data(), n);
        for (int64_t i = 0; i < n; ++i) y[r * n + i] = plugin::cast<T>(buf[i]);
      }
    }
  });
}

// One tile: columns [0, w) of an [n, inner] block, w <= kTile.
template <bool Log, class T>
[[gnu::flatten]] LOOM_CPU_CLONES void column_tile(const T* x, T* y, int64_t n, int64_t inner,
                                                  int64_t w) {
  using C = acc_t<T>;
  auto ex = [](C v) {
    if constexpr (std::is_same_v<C, double>) return std::exp(v);
    else return nnmath::exp_f(v);
  };
  C m[kTile], s[kTile];
  for (int64_t j = 0; j < w; ++j) {
    m[j] = -HUGE_VAL;
    s[j] = 0;
  }
  for (int64_t r = 0; r < n; ++r) {
    const T* xr = x + r * inner;
    for (int64_t j = 0; j < w; ++j) {
      const C v = static_cast<C>(xr[j]);
      m[j] = v > m[j] ? v : m[j];
    }
  }
  // float and double keep the exponentials in y; 16-bit floats recompute
  // them rather than round them to 16 bits before the division.
  constexpr bool kStore = std::is_same_v<T, C> && !Log;
  for (int64_t r = 0; r < n; ++r) {
    const T* xr = x + r * inner;
    T* yr = y + r * inner;
    for (int64_t j = 0; j < w; ++j) {
      const C e = ex(static_cast<C>(xr[j]) - m[j]);
      if constexpr (kStore) yr[j] = e;
      s[j] += e;
    }
  }
  for (int64_t j = 0; j < w; ++j) s[j] = Log ? std::log(s[j]) : C(1) / s[j];
  for (int64_t r = 0; r < n; ++r) {
    const T* xr = x + r * inner;
    T* yr = y + r * inner;
    for (int64_t j = 0; j < w; ++j) {
      if constexpr (Log) yr[j] = plugin::cast<T>((static_cast<C>(xr[j]) - m[j]) - s[j]);
      else if constexpr (kStore) yr[j] *= s[j];
      else yr[j] = plugin::cast<T>(ex(static_cast<C>(xr[j]) - m[j]) * s[j]);
    }
  }
}

// Contiguous [outer, n, inner] with inner > 1.
template <bool Log, class T>
void columns_layout(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  const int64_t tiles = (inner + kTile - 1) / kTile;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n * kTile, 1));
  parallel_chunks(outer * tiles, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / tiles, j0 = (t % tiles) * kTile;
      const int64_t off = o * n * inner + j0;
      column_tile<Log>(x + off, y + off, n, inner, std::min(kTile, inner - j0));
    }
  });
}

// Any strides: each line along `dim` through a buffer.
template <bool Log, class T>
void strided_layout(const LoomTensorDesc& in, const LoomTensorDesc& out, int64_t dim) {
  using C = acc_t<T>;
  const T* x = plugin::data_ptr<const T>(in);
  T* y = plugin::data_ptr<T>(out);
  const int64_t n = in.shape[dim], sx = in.strides[dim], sy = out.strides[dim];
  int64_t lines = 1;
  for (int32_t d = 0; d < in.ndim; ++d)
    if (d != dim) lines *= in.shape[d];
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
  parallel_chunks(lines, grain, [&](int64_t l0, int64_t l1) {
    std::vector<C> buf(static_cast<size_t>(n));
    for (int64_t l = l0; l < l1; ++l) {
      int64_t ox = 0, oy = 0, rest = l;  // the line's start: l over the other dims, row-major
      for (int32_t d = in.ndim - 1; d >= 0; --d) {
        if (d == dim) continue;
        const int64_t i = rest % in.shape[d];
        rest /= in.shape[d];
        ox += i * in.strides[d];
        oy += i * out.strides[d];
      }
      for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<C>(x[ox + i * sx]);
      row<Log>(buf.data(), buf.data(), n);
      for (int64_t i = 0; i < n; ++i) y[oy + i * sy] = plugin::cast<T>(buf[i]);
    }
  });
}

template <bool Log>
void softmax_kernel(const LoomKernelCall& c, const char* name) {
  expect_arity(c, name, 1, 1);
  expect_values(c, name, 1);
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  expect_like(in, out, name);
  const AlongDim a = along_dim(c, in, name);
  if (plugin::numel(in) == 0) return;
  const int64_t outer = a.outer, n = a.n, inner = a.inner;
  dispatch<DTypes::Floating>(in.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    if (!all_contiguous(in, out)) return strided_layout<Log, T>(in, out, a.dim);
    const T* x = plugin::data_ptr<const T>(in);
    T* y = plugin::data_ptr<T>(out);
    if (inner == 1) rows_layout<Log>(x, y, outer, n);
    else columns_layout<Log>(x, y, outer, n, inner);
  });
}

}  // namespace

void softmax(const LoomKernelCall& c) { softmax_kernel<false>(c, "softmax"); }
void log_softmax(const LoomKernelCall& c) { softmax_kernel<true>(c, "log_softmax"); }

void register_softmax_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("softmax", "cpu", kernel<softmax>, kFloatingMask);
  r.kernel("log_softmax", "cpu", kernel<log_softmax>, kFloatingMask);
  // nn_softmax_backward.cpp; a gradient is often a broadcast: the core hands
  // over contiguous copies.
  r.kernel("_softmax_backward", "cpu", kernel<softmax_backward>, kFloatingMask, LOOM_KERNEL_CONTIGUOUS_ONLY);
  r.kernel("_log_softmax_backward", "cpu", kernel<log_softmax_backward>, kFloatingMask, LOOM_KERNEL_CONTIGUOUS_ONLY);
}

}  // namespace loom::cpu
