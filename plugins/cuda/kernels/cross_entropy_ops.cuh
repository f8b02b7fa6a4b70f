// Per-sample math of the fused cross_entropy kernels (cross_entropy.cu),
// __host__ __device__ so tests/cross_entropy_ops_test.cu runs it on the host.
// PyTorch's formulas for class-index targets (the core's composites in
// core/src/ops/ops_nn_loss.cpp and ops_cross_entropy_backward.cpp), with
// p = softmax(x) over the classes, w the class weights (1 without),
// S_w = Σ_c w_c, a = 1 - label_smoothing, b = label_smoothing / C:
//   loss   = a w_t (lse - x_t) + b Σ_c w_c (lse - x_c)
//          = a w_t ((m - x_t) + log s) + b (S_w log s + Σ_c w_c (m - x_c))
//   dx_c   = g [p_c (a w_t + b S_w) - b w_c - a w_t [c = t]]
// where m, s = Σ exp(x - m) come from an OnlineSoftmax (row_ops.cuh), and
// Σ w_c (m - x_c) is summed once m is final (terms of one sign: nothing
// cancels, unlike S_w m - Σ w_c x_c). An ignored sample has loss 0, weight 0
// and gradient 0; 'mean' divides the summed losses by the summed weights
// (0/0 = NaN when every target is ignored, as PyTorch).
//
// C is the compute type (float for float16/bfloat16/float32, double for
// float64). The final sums run in double.
#pragma once

#include "row_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <cstdint>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE::xent {

enum class Target { Counted, Ignored, OutOfRange };

__host__ __device__ inline Target classify(int64_t t, int64_t classes, int64_t ignore_index) {
  if (t == ignore_index) return Target::Ignored;
  return t >= 0 && t < classes ? Target::Counted : Target::OutOfRange;
}

// a, b and S_w above.
template <class C>
struct Smoothing {
  C a, b, sw;
};
__host__ inline Smoothing<double> smoothing(double label_smoothing, int64_t classes, double weight_sum) {
  return {1 - label_smoothing, label_smoothing / static_cast<double>(classes), weight_sum};
}
template <class C>
__host__ inline Smoothing<C> narrow_smoothing(const Smoothing<double>& k) {
  return {static_cast<C>(k.a), static_cast<C>(k.b), static_cast<C>(k.sw)};
}

// A plain sum as a mergeable state (row_reduce.cuh's merge_row protocol).
template <class C>
struct Sum {
  C v = 0;
  __host__ __device__ void add(C x) { v += x; }
  __host__ __device__ void combine(const Sum& o) { v += o.v; }
  template <class F>
  __host__ __device__ Sum map(F f) const {
    Sum r;
    r.v = f(v);
    return r;
  }
};

// The loss of a counted sample: its statistics, its target's logit x_t and
// weight w_t, and smooth = Σ_c w_c (m - x_c) (only read when b != 0).
template <class C>
__host__ __device__ inline C sample_loss(const rows::OnlineSoftmax<C>& st, C x_t, C w_t, C smooth,
                                         const Smoothing<C>& k) {
  const C lg = rows::log_of(st.s);
  C l = k.a * w_t * ((st.m - x_t) + lg);
  if (k.b != 0) l += k.b * (k.sw * lg + smooth);
  return l;
}

// The gradient of a counted sample with coefficient g, as
// dx_c = exp(x_c - m) · scale - shift · w_c - [c = t] · hit.
template <class C>
struct GradRow {
  C scale, shift, hit;
};
template <class C>
__host__ __device__ inline GradRow<C> grad_row(const rows::OnlineSoftmax<C>& st, C g, C w_t, const Smoothing<C>& k) {
  return {g * (k.a * w_t + k.b * k.sw) / st.s, g * k.b, g * k.a * w_t};
}
template <class C>
__host__ __device__ inline C grad_element(const GradRow<C>& r, const rows::OnlineSoftmax<C>& st, C x_c, C w_c,
                                          bool is_target) {
  const C v = rows::exp_of(x_c - st.m) * r.scale - r.shift * w_c;
  return is_target ? v - r.hit : v;
}

// The summed losses and weights of many samples ('sum' and 'mean').
struct LossSum {
  double loss = 0, weight = 0;
  __host__ __device__ void add(double l, double w) {
    loss += l;
    weight += w;
  }
  __host__ __device__ void combine(const LossSum& o) {
    loss += o.loss;
    weight += o.weight;
  }
  __host__ __device__ double result(bool mean) const { return mean ? loss / weight : loss; }
  template <class F>
  __host__ __device__ LossSum map(F f) const {
    LossSum r;
    r.loss = f(loss);
    r.weight = f(weight);
    return r;
  }
};

// ---- the whole per-sample algorithm, as the kernels run it ------------------------------
// Lane l of a group of `lanes` threads (1, 32 or 256) folds elements l,
// l + lanes, ...; then the states merge in row_reduce.cuh's order: each
// warp's tree (lane i takes lane i + 16, then i + 8, ...), and for a block
// the same tree over the warps' results (padded with empty states). The
// host tests run these against plain loops; the kernels call the same
// add/combine. `fold(state, i)` adds element i.
template <class S>
__host__ S warp_tree(std::vector<S> s) {
  s.resize(32);
  for (int d = 16; d > 0; d /= 2)
    for (int l = 0; l < d; ++l) s[l].combine(s[l + d]);
  return s[0];
}
template <class S, class Fold>
__host__ S fold_lanes(int64_t n, int lanes, Fold fold) {
  std::vector<S> st(static_cast<size_t>(lanes));
  for (int l = 0; l < lanes; ++l)
    for (int64_t i = l; i < n; i += lanes) fold(st[l], i);
  if (lanes == 1) return st[0];
  std::vector<S> warps;
  for (int w = 0; w < lanes; w += 32) warps.push_back(warp_tree(std::vector<S>(st.begin() + w, st.begin() + w + 32)));
  return warps.size() == 1 ? warps[0] : warp_tree(warps);
}

// A sample's loss from `lanes` lanes (x(i): logit i as C, w(i): its weight).
template <class C, class X, class W>
__host__ C lanes_loss(int64_t classes, int64_t t, int lanes, const Smoothing<C>& k, X x, W w) {
  const auto st = fold_lanes<rows::OnlineSoftmax<C>>(classes, lanes, [&](auto& s, int64_t i) { s.add(x(i)); });
  C smooth = 0;
  if (k.b != 0)
    smooth = fold_lanes<Sum<C>>(classes, lanes, [&](auto& s, int64_t i) { s.add(w(i) * (st.m - x(i))); }).v;
  return sample_loss(st, x(t), w(t), smooth, k);
}

// A sample's gradient (coefficient g) from `lanes` lanes, element by element.
template <class C, class X, class W>
__host__ std::vector<C> lanes_grad(int64_t classes, int64_t t, int lanes, C g, const Smoothing<C>& k, X x, W w) {
  const auto st = fold_lanes<rows::OnlineSoftmax<C>>(classes, lanes, [&](auto& s, int64_t i) { s.add(x(i)); });
  const GradRow<C> row = grad_row(st, g, w(t), k);
  std::vector<C> d(static_cast<size_t>(classes));
  for (int64_t i = 0; i < classes; ++i) d[i] = grad_element(row, st, x(i), w(i), i == t);
  return d;
}

}  // namespace loom::LOOM_GPU_NAMESPACE::xent
