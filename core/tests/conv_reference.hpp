// Naive direct-loop references for the conv family tests: PyTorch's
// definitions written out, in double, on row-major [N, C, H, W] data.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace conv_ref {

struct Array4 {
  std::vector<double> v;
  int64_t n = 0, c = 0, h = 0, w = 0;
  double at(int64_t a, int64_t b, int64_t y, int64_t x) const { return v[static_cast<size_t>(((a * c + b) * h + y) * w + x)]; }
  double& at(int64_t a, int64_t b, int64_t y, int64_t x) { return v[static_cast<size_t>(((a * c + b) * h + y) * w + x)]; }
};

inline Array4 make(int64_t n, int64_t c, int64_t h, int64_t w) {
  return {std::vector<double>(static_cast<size_t>(n * c * h * w), 0.0), n, c, h, w};
}

struct Params {
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1, oph = 0, opw = 0;
};

// weight [O, C/g, kH, kW]
inline Array4 conv2d(const Array4& x, const Array4& wt, const std::vector<double>& bias, const Params& p) {
  const int64_t O = wt.n, Cg = wt.c, kH = wt.h, kW = wt.w, Og = O / p.groups;
  const int64_t OH = (x.h + 2 * p.ph - p.dh * (kH - 1) - 1) / p.sh + 1;
  const int64_t OW = (x.w + 2 * p.pw - p.dw * (kW - 1) - 1) / p.sw + 1;
  Array4 y = make(x.n, O, OH, OW);
  for (int64_t n = 0; n < x.n; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = bias.empty() ? 0.0 : bias[static_cast<size_t>(o)];
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < kH; ++kh)
              for (int64_t kw = 0; kw < kW; ++kw) {
                const int64_t ih = oh * p.sh - p.ph + kh * p.dh, iw = ow * p.sw - p.pw + kw * p.dw;
                if (ih < 0 || ih >= x.h || iw < 0 || iw >= x.w) continue;
                s += x.at(n, (o / Og) * Cg + c, ih, iw) * wt.at(o, c, kh, kw);
              }
          y.at(n, o, oh, ow) = s;
        }
  return y;
}

// weight [C, O/g, kH, kW]; scatter form, the definition of a transposed conv.
inline Array4 conv_transpose2d(const Array4& x, const Array4& wt, const std::vector<double>& bias,
                               const Params& p) {
  const int64_t C = x.c, Cg = C / p.groups, Og = wt.c, O = Og * p.groups, kH = wt.h, kW = wt.w;
  const int64_t OH = (x.h - 1) * p.sh - 2 * p.ph + p.dh * (kH - 1) + p.oph + 1;
  const int64_t OW = (x.w - 1) * p.sw - 2 * p.pw + p.dw * (kW - 1) + p.opw + 1;
  Array4 y = make(x.n, O, OH, OW);
  for (int64_t n = 0; n < x.n; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) y.at(n, o, oh, ow) = bias.empty() ? 0.0 : bias[static_cast<size_t>(o)];
  for (int64_t n = 0; n < x.n; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ih = 0; ih < x.h; ++ih)
        for (int64_t iw = 0; iw < x.w; ++iw)
          for (int64_t ol = 0; ol < Og; ++ol)
            for (int64_t kh = 0; kh < kH; ++kh)
              for (int64_t kw = 0; kw < kW; ++kw) {
                const int64_t oh = ih * p.sh - p.ph + kh * p.dh, ow = iw * p.sw - p.pw + kw * p.dw;
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                y.at(n, (c / Cg) * Og + ol, oh, ow) += x.at(n, c, ih, iw) * wt.at(c, ol, kh, kw);
              }
  return y;
}

// PyTorch's pooling_output_shape.
inline int64_t pool_out(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil) {
  const int64_t num = in + 2 * pad - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
  int64_t o = static_cast<int64_t>(std::floor(static_cast<double>(num) / static_cast<double>(s))) + 1;
  if (ceil && (o - 1) * s >= in + pad) --o;
  return o;
}

struct Pool {
  int64_t kh, kw, sh, sw, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil = false;
};

// Values and flat H*W indices; NaN propagates (the last NaN's index, as PyTorch).
inline std::pair<Array4, std::vector<int64_t>> max_pool2d(const Array4& x, const Pool& p) {
  const int64_t OH = pool_out(x.h, p.kh, p.ph, p.sh, p.dh, p.ceil), OW = pool_out(x.w, p.kw, p.pw, p.sw, p.dw, p.ceil);
  Array4 y = make(x.n, x.c, OH, OW);
  std::vector<int64_t> idx;
  for (int64_t n = 0; n < x.n; ++n)
    for (int64_t c = 0; c < x.c; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double best = -std::numeric_limits<double>::infinity();
          int64_t bi = -1;
          for (int64_t kh = 0; kh < p.kh; ++kh)
            for (int64_t kw = 0; kw < p.kw; ++kw) {
              const int64_t ih = oh * p.sh - p.ph + kh * p.dh, iw = ow * p.sw - p.pw + kw * p.dw;
              if (ih < 0 || ih >= x.h || iw < 0 || iw >= x.w) continue;
              const double v = x.at(n, c, ih, iw);
              if (bi < 0 || v > best || std::isnan(v)) {
                best = v;
                bi = ih * x.w + iw;
              }
            }
          y.at(n, c, oh, ow) = best;
          idx.push_back(bi);
        }
  return {y, idx};
}

inline Array4 avg_pool2d(const Array4& x, const Pool& p, bool count_include_pad, int64_t divisor = 0) {
  const int64_t OH = pool_out(x.h, p.kh, p.ph, p.sh, 1, p.ceil), OW = pool_out(x.w, p.kw, p.pw, p.sw, 1, p.ceil);
  Array4 y = make(x.n, x.c, OH, OW);
  for (int64_t n = 0; n < x.n; ++n)
    for (int64_t c = 0; c < x.c; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
          // The window clipped to the padded input counts for count_include_pad.
          const int64_t h1 = std::min(h0 + p.kh, x.h + p.ph), w1 = std::min(w0 + p.kw, x.w + p.pw);
          double s = 0;
          int64_t inside = 0;
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw)
              if (ih >= 0 && ih < x.h && iw >= 0 && iw < x.w) {
                s += x.at(n, c, ih, iw);
                ++inside;
              }
          const int64_t div = divisor ? divisor : count_include_pad ? (h1 - h0) * (w1 - w0) : inside;
          y.at(n, c, oh, ow) = s / static_cast<double>(div);
        }
  return y;
}

inline Array4 adaptive_avg_pool2d(const Array4& x, int64_t OH, int64_t OW) {
  Array4 y = make(x.n, x.c, OH, OW);
  for (int64_t n = 0; n < x.n; ++n)
    for (int64_t c = 0; c < x.c; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t h0 = static_cast<int64_t>(std::floor(double(oh * x.h) / double(OH)));
          const int64_t h1 = static_cast<int64_t>(std::ceil(double((oh + 1) * x.h) / double(OH)));
          const int64_t w0 = static_cast<int64_t>(std::floor(double(ow * x.w) / double(OW)));
          const int64_t w1 = static_cast<int64_t>(std::ceil(double((ow + 1) * x.w) / double(OW)));
          double s = 0;
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) s += x.at(n, c, ih, iw);
          y.at(n, c, oh, ow) = s / double((h1 - h0) * (w1 - w0));
        }
  return y;
}

}  // namespace conv_ref
