// Direct convolution loops: every dtype and layout oneDNN does not take
// (float64, integers, float16, odd strides). One output plane (n, o) per
// task, accumulated in a compute-type buffer and stored once; the inner loop
// runs over an output row with the padding bounds hoisted out of it.
#include "common.hpp"
#include "conv.hpp"

#include <algorithm>
#include <vector>

namespace loom::cpu {
namespace {

// First i in [0, n) with lo <= i*s + off, and one past the last with
// i*s + off < hi: the outputs whose tap lands inside [lo, hi).
inline void tap_range(int64_t off, int64_t s, int64_t hi, int64_t n, int64_t& first, int64_t& last) {
  first = off >= 0 ? 0 : (-off + s - 1) / s;
  const int64_t top = hi - 1 - off;
  last = top < 0 ? 0 : std::min(n, top / s + 1);
  if (last < first) last = first;
}

template <class T>
void forward(const ConvProblem& p) {
  using A = arith_t<T>;
  const T* x = static_cast<const T*>(p.x);
  const T* w = static_cast<const T*>(p.w);
  const T* b = static_cast<const T*>(p.b);
  T* y = static_cast<T*>(p.y);
  const int64_t Cg = p.C / p.groups, Og = p.O / p.groups, plane = p.OH * p.OW;
  const int64_t work = std::max<int64_t>(1, plane * Cg * p.kH * p.kW);
  parallel_for(p.N * p.O, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(static_cast<size_t>(plane));
    for (int64_t no = lo; no < hi; ++no) {
      const int64_t n = no / p.O, o = no % p.O, g = o / Og;
      std::fill(acc.begin(), acc.end(), b ? to_arith(b[o * p.bs]) : A{});
      for (int64_t c = 0; c < Cg; ++c) {
        const T* xp = x + n * p.xs[0] + (g * Cg + c) * p.xs[1];
        for (int64_t kh = 0; kh < p.kH; ++kh) {
          int64_t oh0, oh1;
          tap_range(kh * p.dil[0] - p.pad[0], p.stride[0], p.H, p.OH, oh0, oh1);
          for (int64_t kw = 0; kw < p.kW; ++kw) {
            const A wv = to_arith(w[o * p.ws[0] + c * p.ws[1] + kh * p.ws[2] + kw * p.ws[3]]);
            const int64_t woff = kw * p.dil[1] - p.pad[1];
            int64_t ow0, ow1;
            tap_range(woff, p.stride[1], p.W, p.OW, ow0, ow1);
            for (int64_t oh = oh0; oh < oh1; ++oh) {
              const T* xr = xp + (oh * p.stride[0] + kh * p.dil[0] - p.pad[0]) * p.xs[2];
              A* ar = acc.data() + oh * p.OW;
              const int64_t step = p.stride[1] * p.xs[3];
              const T* xi = xr + (ow0 * p.stride[1] + woff) * p.xs[3];
              for (int64_t ow = ow0; ow < ow1; ++ow, xi += step) ar[ow] += wv * to_arith(*xi);
            }
          }
        }
      }
      T* yp = y + n * p.ys[0] + o * p.ys[1];
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow)
          yp[oh * p.ys[2] + ow * p.ys[3]] = from_arith<T>(acc[static_cast<size_t>(oh * p.OW + ow)]);
    }
  });
}

// Transposed: input pixel (ih, iw) scatters into output (ih*s - p + kh*d, ...).
// Each task owns one output plane, so the scatter needs no synchronisation.
template <class T>
void transposed(const ConvProblem& p) {
  using A = arith_t<T>;
  const T* x = static_cast<const T*>(p.x);
  const T* w = static_cast<const T*>(p.w);
  const T* b = static_cast<const T*>(p.b);
  T* y = static_cast<T*>(p.y);
  const int64_t Cg = p.C / p.groups, Og = p.O / p.groups, plane = p.OH * p.OW;
  const int64_t work = std::max<int64_t>(1, p.H * p.W * Cg * p.kH * p.kW);
  parallel_for(p.N * p.O, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(static_cast<size_t>(plane));
    for (int64_t no = lo; no < hi; ++no) {
      const int64_t n = no / p.O, o = no % p.O, g = o / Og, ol = o % Og;
      std::fill(acc.begin(), acc.end(), b ? to_arith(b[o * p.bs]) : A{});
      for (int64_t c = 0; c < Cg; ++c) {
        const int64_t ci = g * Cg + c;
        const T* xp = x + n * p.xs[0] + ci * p.xs[1];
        for (int64_t kh = 0; kh < p.kH; ++kh) {
          int64_t ih0, ih1;
          tap_range(kh * p.dil[0] - p.pad[0], p.stride[0], p.OH, p.H, ih0, ih1);
          for (int64_t kw = 0; kw < p.kW; ++kw) {
            const A wv = to_arith(w[ci * p.ws[0] + ol * p.ws[1] + kh * p.ws[2] + kw * p.ws[3]]);
            const int64_t woff = kw * p.dil[1] - p.pad[1];
            int64_t iw0, iw1;
            tap_range(woff, p.stride[1], p.OW, p.W, iw0, iw1);
            for (int64_t ih = ih0; ih < ih1; ++ih) {
              A* ar = acc.data() + (ih * p.stride[0] + kh * p.dil[0] - p.pad[0]) * p.OW;
              const T* xr = xp + ih * p.xs[2];
              for (int64_t iw = iw0; iw < iw1; ++iw)
                ar[iw * p.stride[1] + woff] += wv * to_arith(xr[iw * p.xs[3]]);
            }
          }
        }
      }
      T* yp = y + n * p.ys[0] + o * p.ys[1];
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow)
          yp[oh * p.ys[2] + ow * p.ys[3]] = from_arith<T>(acc[static_cast<size_t>(oh * p.OW + ow)]);
    }
  });
}

}  // namespace

void conv_loop(const ConvProblem& p) {
  dispatch<DTypes::NoBool>(p.dtype, p.transposed ? "conv_transpose2d" : "conv2d", [&](auto t) {
    using T = decltype(t);
    if (p.transposed)
      transposed<T>(p);
    else
      forward<T>(p);
  });
}

}  // namespace loom::cpu
