// Pooling loops: max (with PyTorch's indices), average and adaptive average
// over [N, C, H, W] views of any strides (docs/kernel_conventions.md,
// "Convolution and pooling"). One (n, c) plane per task; window bounds are
// clipped once per output element, so the inner loops have no branches on
// padding. 16-bit floats compute in float32, averages accumulate in double
// (int64 for integers, which divide truncating, as PyTorch).
#include "common.hpp"
#include "pool.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace loom::cpu {
namespace {

struct Plane {
  int64_t N, C, H, W, OH, OW;
  int64_t xs[4], ys[4];
};

Plane read_planes(const LoomKernelCall& c, const char* op) {
  const LoomTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  if (x.ndim != 4 || y.ndim != 4 || x.dtype != y.dtype || x.shape[0] != y.shape[0] ||
      x.shape[1] != y.shape[1]) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected 4-D input and output of one dtype", op);
  Plane p{x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[2], y.shape[3], {}, {}};
  for (int i = 0; i < 4; ++i) {
    p.xs[i] = x.strides[i];
    p.ys[i] = y.strides[i];
  }
  return p;
}

const int64_t* pair(const LoomKernelCall& c, int i, const char* op) {
  if (i >= c.num_values || c.values[i].kind != LOOM_VALUE_INT_LIST || c.values[i].u.ints.size != 2)
    [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected a 2-element int list at value %d", op, i);
  return c.values[i].u.ints.data;
}

// Runs f(n, c) over every plane, several planes per task when they are small.
template <class F>
void for_planes(const Plane& p, int64_t work_per_plane, F&& f) {
  parallel_for(p.N * p.C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work_per_plane)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t i = lo; i < hi; ++i) f(i / p.C, i % p.C);
               });
}

template <class T>
void max_pool(const LoomKernelCall& c, const Plane& p) {
  using A = compute_t<T>;
  const int64_t *k = pair(c, 0, "max_pool2d"), *s = pair(c, 1, "max_pool2d"),
                *pd = pair(c, 2, "max_pool2d"), *d = pair(c, 3, "max_pool2d");
  const T* x = plugin::data_ptr<const T>(c.inputs[0]);
  T* y = plugin::data_ptr<T>(c.outputs[0]);
  int64_t* ind = c.num_outputs > 1 ? plugin::data_ptr<int64_t>(c.outputs[1]) : nullptr;
  const int64_t* is = c.num_outputs > 1 ? c.outputs[1].strides : nullptr;
  for_planes(p, p.OH * p.OW * k[0] * k[1], [&](int64_t n, int64_t ch) {
    const T* xp = x + n * p.xs[0] + ch * p.xs[1];
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      // First and one-past-last kernel rows whose input row is inside.
      int64_t h0 = oh * s[0] - pd[0];
      const int64_t kh0 = h0 < 0 ? (-h0 + d[0] - 1) / d[0] : 0;
      const int64_t kh1 = std::min(k[0], (p.H - h0 + d[0] - 1) / d[0]);
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        const int64_t w0 = ow * s[1] - pd[1];
        const int64_t kw0 = w0 < 0 ? (-w0 + d[1] - 1) / d[1] : 0;
        const int64_t kw1 = std::min(k[1], (p.W - w0 + d[1] - 1) / d[1]);
        // As PyTorch: start at -inf with the first valid position; NaN wins.
        A best = -std::numeric_limits<A>::infinity();
        int64_t best_i = (h0 + kh0 * d[0]) * p.W + (w0 + kw0 * d[1]);
        for (int64_t kh = kh0; kh < kh1; ++kh) {
          const int64_t ih = h0 + kh * d[0];
          const T* xr = xp + ih * p.xs[2];
          for (int64_t kw = kw0; kw < kw1; ++kw) {
            const int64_t iw = w0 + kw * d[1];
            const A v = widen(xr[iw * p.xs[3]]);
            if (v > best || std::isnan(v)) {
              best = v;
              best_i = ih * p.W + iw;
            }
          }
        }
        y[n * p.ys[0] + ch * p.ys[1] + oh * p.ys[2] + ow * p.ys[3]] = narrow<T>(best);
        if (ind) ind[n * is[0] + ch * is[1] + oh * is[2] + ow * is[3]] = best_i;
      }
    }
  });
}

// Integers go to int64 directly (widen would make them unsigned).
template <class A, class T>
inline A to_acc(T v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<A>(v);
  else
    return static_cast<A>(widen(v));
}

template <class T>
using avg_acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

template <class T>
void avg_pool(const LoomKernelCall& c, const Plane& p) {
  using A = avg_acc_t<T>;
  const int64_t *k = pair(c, 0, "avg_pool2d"), *s = pair(c, 1, "avg_pool2d"),
                *pd = pair(c, 2, "avg_pool2d");
  const bool include_pad = c.values[4].u.i != 0;
  const bool has_div = c.values[5].kind == LOOM_VALUE_INT;
  const int64_t divisor = has_div ? c.values[5].u.i : 0;
  const T* x = plugin::data_ptr<const T>(c.inputs[0]);
  T* y = plugin::data_ptr<T>(c.outputs[0]);
  for_planes(p, p.OH * p.OW * k[0] * k[1], [&](int64_t n, int64_t ch) {
    const T* xp = x + n * p.xs[0] + ch * p.xs[1];
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      int64_t h0 = oh * s[0] - pd[0], h1 = std::min(h0 + k[0], p.H + pd[0]);
      const int64_t ph = h1 - h0;
      h0 = std::max<int64_t>(h0, 0);
      h1 = std::min(h1, p.H);
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        int64_t w0 = ow * s[1] - pd[1], w1 = std::min(w0 + k[1], p.W + pd[1]);
        const int64_t pool = ph * (w1 - w0);
        w0 = std::max<int64_t>(w0, 0);
        w1 = std::min(w1, p.W);
        A sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += to_acc<A>(xp[ih * p.xs[2] + iw * p.xs[3]]);
        const int64_t div = has_div ? divisor : include_pad ? pool : (h1 - h0) * (w1 - w0);
        const A v = (h0 >= h1 || w0 >= w1) ? A{0} : sum / static_cast<A>(div);
        y[n * p.ys[0] + ch * p.ys[1] + oh * p.ys[2] + ow * p.ys[3]] = plugin::cast<T>(v);
      }
    }
  });
}

template <class T>
void adaptive_avg(const LoomKernelCall& c, const Plane& p) {
  const T* x = plugin::data_ptr<const T>(c.inputs[0]);
  T* y = plugin::data_ptr<T>(c.outputs[0]);
  for_planes(p, p.H * p.W + p.OH * p.OW, [&](int64_t n, int64_t ch) {
    const T* xp = x + n * p.xs[0] + ch * p.xs[1];
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      const int64_t h0 = oh * p.H / p.OH, h1 = ((oh + 1) * p.H + p.OH - 1) / p.OH;
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        const int64_t w0 = ow * p.W / p.OW, w1 = ((ow + 1) * p.W + p.OW - 1) / p.OW;
        double sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += to_acc<double>(xp[ih * p.xs[2] + iw * p.xs[3]]);
        y[n * p.ys[0] + ch * p.ys[1] + oh * p.ys[2] + ow * p.ys[3]] =
            plugin::cast<T>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
    }
  });
}

}  // namespace

void max_pool2d(const LoomKernelCall& c) {
  if (c.num_inputs != 1 || c.num_outputs < 1 || c.num_outputs > 2) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu max_pool2d: expected 1 input and 1 or 2 outputs");
  const Plane p = read_planes(c, "max_pool2d");
  if (c.num_outputs == 2 && (c.outputs[1].dtype != LOOM_DTYPE_INT64 || c.outputs[1].ndim != 4)) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu max_pool2d: expected 4-D int64 indices");
  if (p.N * p.C * p.OH * p.OW == 0) return;
  dispatch<DTypes::Floating>(c.inputs[0].dtype, "max_pool2d", [&](auto t) { max_pool<decltype(t)>(c, p); });
}

void avg_pool2d(const LoomKernelCall& c) {
  expect_arity(c, "avg_pool2d", 1, 1);
  expect_values(c, "avg_pool2d", 6);
  const Plane p = read_planes(c, "avg_pool2d");
  if (p.N * p.C * p.OH * p.OW == 0) return;
  dispatch<DTypes::NoBool>(c.inputs[0].dtype, "avg_pool2d", [&](auto t) { avg_pool<decltype(t)>(c, p); });
}

void adaptive_avg_pool2d(const LoomKernelCall& c) {
  expect_arity(c, "adaptive_avg_pool2d", 1, 1);
  const Plane p = read_planes(c, "adaptive_avg_pool2d");
  if (p.N * p.C * p.OH * p.OW == 0) return;
  dispatch<DTypes::Floating>(c.inputs[0].dtype, "adaptive_avg_pool2d",
                             [&](auto t) { adaptive_avg<decltype(t)>(c, p); });
}

}  // namespace loom::cpu
