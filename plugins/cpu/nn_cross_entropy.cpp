// cross_entropy and _cross_entropy_backward for class-index targets
// (docs/kernel_conventions.md, "Nn"; the core's composites in
// core/src/ops/ops_nn_loss.cpp and ops_cross_entropy_backward.cpp are the
// reference). Probability targets (a floating target) are declined with
// LOOM_STATUS_UNSUPPORTED: the core runs the composite for them.
//
// Registered CONTIGUOUS_ONLY for float32 and float64, so the input is
// [N, C, inner] row-major (inner = the product of the spatial dims; 1 for
// [N, C] and [C]) and sample r = n·inner + j reads its C logits inner apart.
//
// A serial pre-pass over the targets checks every class (failing with the
// composite's words, naming the first bad target in flat order) and sums
// the counted targets' weights W, which 'mean' divides by. Then, in
// parallel over samples, each sample's logits are swept while they sit in
// L1: the max m, then s = Σ exp(x - m) and, with label smoothing,
// Σ w_c (m - x_c) (terms of one sign: nothing cancels). With lse = m + log s,
// S_w = Σ_c w_c (C without weights), a = 1 - ls, b = ls / C:
//   loss_r = a w_t (lse - x_t) + b (S_w log s + Σ_c w_c (m - x_c))
//   dx_c   = g_r [p_c (a w_t + b S_w) - b w_c - a w_t [c = t]],  p_c = exp(x_c - m) / s
// and both are 0 for an ignored sample. g_r is grad_output's element r
// ('none'), or its one value (divided by W for 'mean').
//
// [N, C] rows run nn_math.hpp's vector max and exp for float32; spatial
// inputs go in tiles of up to kTile samples whose lanes run across j, so
// the loops vectorise without a gather. 'sum' and 'mean' add the per-sample
// losses serially in double: the result does not depend on the threads.
#include "common.hpp"
#include "kernels.hpp"
#include "loops.hpp"
#include "nn.hpp"
#include "nn_math.hpp"
#include "nn_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <type_traits>
#include <vector>

namespace loom::cpu {
namespace {

constexpr int64_t kTile = 64;  // samples per tile in the spatial layout

enum class Reduction { None, Mean, Sum };

// Both kernels' operands, the input viewed as [N, C, inner].
struct Problem {
  const LoomTensorDesc* input;
  const int64_t* target;
  const LoomTensorDesc* weight;  // nullptr: no class weights
  int64_t N, C, inner;
  Reduction reduction;
  int64_t ignore_index;
  double ls;
  int64_t samples() const { return N * inner; }
};

Reduction read_reduction(const LoomValue& v, const char* op) {
  if (v.kind == LOOM_VALUE_STRING) {
    const std::string_view s(v.u.str.data, static_cast<size_t>(v.u.str.size));
    if (s == "none") return Reduction::None;
    if (s == "mean") return Reduction::Mean;
    if (s == "sum") return Reduction::Sum;
  }
  fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: reduction must be the string 'none', 'mean' or 'sum'", op);
}

// inputs [grad_output,] self, target, weight; values reduction,
// ignore_index, label_smoothing. `first` is self's position.
Problem read_problem(const LoomKernelCall& c, const char* op, int32_t first) {
  expect_arity(c, op, first + 3, 1);
  expect_values(c, op, 3);
  const LoomTensorDesc& in = c.inputs[first];
  const LoomTensorDesc& target = c.inputs[first + 1];
  const LoomTensorDesc& weight = c.inputs[first + 2];
  if (target.dtype != LOOM_DTYPE_INT64) [[unlikely]]
    fail(LOOM_STATUS_UNSUPPORTED, "cpu %s: only int64 class-index targets (got %s; probability targets run as "
         "the core's composite)", op, plugin::dtype_name(target.dtype));
  if (in.ndim < 1 || (in.dtype != LOOM_DTYPE_FLOAT32 && in.dtype != LOOM_DTYPE_FLOAT64)) [[unlikely]]
    fail(LOOM_STATUS_UNSUPPORTED, "cpu %s: expected a float32 or float64 input of 1 or more dims, got %s of %d dims",
         op, plugin::dtype_name(in.dtype), in.ndim);
  Problem p{&in, plugin::data_ptr<const int64_t>(target), plugin::is_absent(weight) ? nullptr : &weight,
            in.ndim == 1 ? 1 : in.shape[0], in.ndim == 1 ? in.shape[0] : in.shape[1], 1,
            read_reduction(c.values[0], op), plugin::value_int(c, 1), plugin::value_float(c, 2)};
  for (int32_t d = 2; d < in.ndim; ++d) p.inner *= in.shape[d];
  if (plugin::numel(target) != p.samples()) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: target has %lld elements, expected %lld (the input without its "
         "class dim)", op, static_cast<long long>(plugin::numel(target)), static_cast<long long>(p.samples()));
  if (p.weight && (plugin::numel(weight) != p.C || weight.dtype != in.dtype)) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: weight must have %lld elements of dtype %s", op,
         static_cast<long long>(p.C), plugin::dtype_name(in.dtype));
  for (int32_t i = 0; i < c.num_inputs; ++i)
    if (!plugin::is_absent(c.inputs[i]) && !plugin::is_contiguous(c.inputs[i])) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: registered CONTIGUOUS_ONLY, got a strided input %d", op, i);
  if (!plugin::is_contiguous(c.outputs[0]) || c.outputs[0].dtype != in.dtype) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected a contiguous %s output", op, plugin::dtype_name(in.dtype));
  return p;
}

// Checks every target and returns W = Σ w_t over the counted ones.
template <class T>
double check_targets(const Problem& p, const T* w, const char* op) {
  double total = 0;
  for (int64_t r = 0; r < p.samples(); ++r) {
    const int64_t t = p.target[r];
    if (t == p.ignore_index) continue;
    if (t < 0 || t >= p.C) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT,
           "%s: target %lld is out of bounds for %lld classes (at flat index %lld of the target; ignore_index "
           "is %lld)", op, static_cast<long long>(t), static_cast<long long>(p.C), static_cast<long long>(r),
           static_cast<long long>(p.ignore_index));
    total += w ? static_cast<double>(w[t]) : 1.0;
  }
  return total;
}

// The per-call constants of the formulas above, in the compute type.
template <class T>
struct Consts {
  const T* w;  // class weights or nullptr
  T a, b, sw;  // 1 - ls, ls / C, S_w

  Consts(const Problem& p, const T* weights) : w(weights) {
    a = static_cast<T>(1 - p.ls);
    b = static_cast<T>(p.ls / static_cast<double>(p.C));
    double s = static_cast<double>(p.C);
    if (w) {
      s = 0;
      for (int64_t c = 0; c < p.C; ++c) s += static_cast<double>(w[c]);
    }
    sw = static_cast<T>(s);
  }
  T weight(int64_t c) const { return w ? w[c] : T(1); }
  // loss_r from the statistics of a counted sample with target t.
  T loss(T m, T s, T x_t, int64_t t, T smooth) const {
    const T ls = std::log(s);
    T l = a * weight(t) * ((m - x_t) + ls);
    if (b != 0) l += b * (sw * ls + smooth);
    return l;
  }
};

// ------------------------------------------------------ [N, C] rows ---

// m = max of x[0, n), s = Σ exp(x - m); the exponentials go to e (n
// elements) or, when e is null, to a block on the stack.
template <int B>
[[gnu::always_inline]] inline void max_sumexp_f32(const float* x, float* e, int64_t n, float& m, float& s) {
  m = nnmath::max_span<B>(x, n);
  if (e) {
    s = nnmath::exp_shift_sum<B>(x, e, n, m);
    return;
  }
  constexpr int64_t kBlock = 256;
  float buf[kBlock];
  s = 0;
  for (int64_t b = 0; b < n; b += kBlock) s += nnmath::exp_shift_sum<B>(x + b, buf, std::min(kBlock, n - b), m);
}
LOOM_NN_TARGET(LOOM_NN_AVX512) void max_sumexp_512(const float* x, float* e, int64_t n, float& m, float& s) {
  max_sumexp_f32<64>(x, e, n, m, s);
}
LOOM_NN_TARGET(LOOM_NN_AVX2) void max_sumexp_256(const float* x, float* e, int64_t n, float& m, float& s) {
  max_sumexp_f32<32>(x, e, n, m, s);
}
void max_sumexp_128(const float* x, float* e, int64_t n, float& m, float& s) { max_sumexp_f32<16>(x, e, n, m, s); }

void max_sumexp(const float* x, float* e, int64_t n, float& m, float& s) {
  static const auto fn = nnmath::pick_isa(&max_sumexp_512, &max_sumexp_256, &max_sumexp_128);
  fn(x, e, n, m, s);
}
// float64: libm's exp, as the softmax kernel.
void max_sumexp(const double* x, double* e, int64_t n, double& m, double& s) {
  m = -HUGE_VAL;
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  s = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = std::exp(x[i] - m);
    if (e) e[i] = v;
    s += v;
  }
}

// Σ w_c (m - x_c) over a row.
template <class T>
T smooth_sum(const T* x, int64_t n, const Consts<T>& k, T m) {
  T s = 0;
  if (k.w) {
    for (int64_t i = 0; i < n; ++i) s += k.w[i] * (m - x[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) s += m - x[i];
  }
  return s;
}

int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work_per_item, 1));
}

// loss(r) goes to `store(r, value)`; ignored samples store 0.
template <class T, class Store>
void forward_rows(const Problem& p, const T* x, const Consts<T>& k, Store store) {
  const int64_t C = p.C;
  parallel_chunks(p.N, grain_for(C), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t t = p.target[r];
      if (t == p.ignore_index) {
        store(r, T(0));
        continue;
      }
      const T* row = x + r * C;
      T m, s;
      max_sumexp(row, static_cast<T*>(nullptr), C, m, s);
      store(r, k.loss(m, s, row[t], t, k.b != 0 ? smooth_sum(row, C, k, m) : T(0)));
    }
  });
}

// g(r) is sample r's coefficient.
template <class T, class Coef>
void backward_rows(const Problem& p, const T* x, T* y, const Consts<T>& k, Coef g) {
  const int64_t C = p.C;
  parallel_chunks(p.N, grain_for(C), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      T* out = y + r * C;
      const int64_t t = p.target[r];
      if (t == p.ignore_index) {
        std::fill(out, out + C, T(0));
        continue;
      }
      T m, s;
      max_sumexp(x + r * C, out, C, m, s);
      const T coef = g(r), scale = coef * (k.a * k.weight(t) + k.b * k.sw) / s, shift = coef * k.b;
      if (k.w) {
        for (int64_t c = 0; c < C; ++c) out[c] = out[c] * scale - shift * k.w[c];
      } else {
        for (int64_t c = 0; c < C; ++c) out[c] = out[c] * scale - shift;
      }
      out[t] -= coef * k.a * k.weight(t);
    }
  });
}

// --------------------------------------------------- spatial tiles ---

template <class T>
T exp_nonpositive(T v) {
  if constexpr (std::is_same_v<T, double>) return std::exp(v);
  else return nnmath::exp_f(v);
}

// Statistics of the w <= kTile samples at x[j] (j < w), their classes
// `inner` apart: m, s and (when smooth) Σ w_c (m - x_c). With e, the
// exponentials go there, laid out as x.
template <class T>
[[gnu::flatten]] LOOM_CPU_CLONES void tile_stats(const T* x, T* e, int64_t C, int64_t inner, int64_t w,
                                                 const T* weight, bool smooth, T* m, T* s, T* sm) {
  for (int64_t j = 0; j < w; ++j) {
    m[j] = -HUGE_VAL;
    s[j] = 0;
    sm[j] = 0;
  }
  for (int64_t c = 0; c < C; ++c) {
    const T* xr = x + c * inner;
    for (int64_t j = 0; j < w; ++j) m[j] = xr[j] > m[j] ? xr[j] : m[j];
  }
  for (int64_t c = 0; c < C; ++c) {
    const T* xr = x + c * inner;
    T* er = e ? e + c * inner : nullptr;
    for (int64_t j = 0; j < w; ++j) {
      const T v = exp_nonpositive(xr[j] - m[j]);
      if (er) er[j] = v;
      s[j] += v;
    }
  }
  if (!smooth) return;
  for (int64_t c = 0; c < C; ++c) {
    const T* xr = x + c * inner;
    const T wc = weight ? weight[c] : T(1);
    for (int64_t j = 0; j < w; ++j) sm[j] += wc * (m[j] - xr[j]);
  }
}

// Calls f(n, j0, w, offset) for every tile: samples j0 .. j0 + w of batch
// element n, whose logits start at `offset`.
template <class F>
void for_tiles(const Problem& p, F f) {
  const int64_t tiles = (p.inner + kTile - 1) / kTile;
  parallel_chunks(p.N * tiles, grain_for(p.C * kTile), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / tiles, j0 = (t % tiles) * kTile;
      f(n, j0, std::min(kTile, p.inner - j0), n * p.C * p.inner + j0);
    }
  });
}

template <class T, class Store>
void forward_tiles(const Problem& p, const T* x, const Consts<T>& k, Store store) {
  for_tiles(p, [&](int64_t n, int64_t j0, int64_t w, int64_t off) {
    T m[kTile], s[kTile], sm[kTile];
    tile_stats(x + off, static_cast<T*>(nullptr), p.C, p.inner, w, k.w, k.b != 0, m, s, sm);
    for (int64_t j = 0; j < w; ++j) {
      const int64_t r = n * p.inner + j0 + j, t = p.target[r];
      store(r, t == p.ignore_index ? T(0) : k.loss(m[j], s[j], x[off + t * p.inner + j], t, sm[j]));
    }
  });
}

template <class T, class Coef>
void backward_tiles(const Problem& p, const T* x, T* y, const Consts<T>& k, Coef g) {
  for_tiles(p, [&](int64_t n, int64_t j0, int64_t w, int64_t off) {
    T m[kTile], s[kTile], sm[kTile], scale[kTile], shift[kTile];
    bool counted[kTile];
    tile_stats(x + off, y + off, p.C, p.inner, w, k.w, false, m, s, sm);
    for (int64_t j = 0; j < w; ++j) {
      const int64_t r = n * p.inner + j0 + j, t = p.target[r];
      counted[j] = t != p.ignore_index;
      const T coef = counted[j] ? g(r) : T(0);
      scale[j] = counted[j] ? coef * (k.a * k.weight(t) + k.b * k.sw) / s[j] : T(0);
      shift[j] = coef * k.b;
    }
    for (int64_t c = 0; c < p.C; ++c) {
      T* yr = y + off + c * p.inner;
      const T wc = k.weight(c);
      for (int64_t j = 0; j < w; ++j) yr[j] = counted[j] ? yr[j] * scale[j] - shift[j] * wc : T(0);
    }
    for (int64_t j = 0; j < w; ++j) {
      const int64_t t = p.target[n * p.inner + j0 + j];
      if (counted[j]) y[off + t * p.inner + j] -= g(n * p.inner + j0 + j) * k.a * k.weight(t);
    }
  });
}

// ------------------------------------------------------------ kernels ---

template <class T>
const T* weights_of(const Problem& p) {
  return p.weight ? plugin::data_ptr<const T>(*p.weight) : nullptr;
}

template <class T>
void forward_typed(const Problem& p, const LoomTensorDesc& out) {
  const T* x = plugin::data_ptr<const T>(*p.input);
  const Consts<T> k(p, weights_of<T>(p));
  const double total_weight = check_targets(p, k.w, "cross_entropy");
  T* y = plugin::data_ptr<T>(out);
  auto run = [&](auto store) {
    if (p.inner == 1) forward_rows(p, x, k, store);
    else forward_tiles(p, x, k, store);
  };
  if (p.reduction == Reduction::None) {
    run([y](int64_t r, T v) { y[r] = v; });
    return;
  }
  std::vector<T> losses(static_cast<size_t>(p.samples()));
  run([&losses](int64_t r, T v) { losses[static_cast<size_t>(r)] = v; });
  double total = 0;
  for (const T v : losses) total += static_cast<double>(v);
  y[0] = static_cast<T>(p.reduction == Reduction::Sum ? total : total / total_weight);
}

template <class T>
void backward_typed(const Problem& p, const LoomTensorDesc& grad, const LoomTensorDesc& out) {
  const T* x = plugin::data_ptr<const T>(*p.input);
  const Consts<T> k(p, weights_of<T>(p));
  const double total_weight = check_targets(p, k.w, "_cross_entropy_backward");
  const T* g = plugin::data_ptr<const T>(grad);
  T* y = plugin::data_ptr<T>(out);
  auto run = [&](auto coef) {
    if (p.inner == 1) backward_rows(p, x, y, k, coef);
    else backward_tiles(p, x, y, k, coef);
  };
  if (p.reduction == Reduction::None) {
    run([g](int64_t r) { return g[r]; });
  } else {
    const T coef = p.reduction == Reduction::Sum ? g[0] : static_cast<T>(static_cast<double>(g[0]) / total_weight);
    run([coef](int64_t) { return coef; });
  }
}

}  // namespace

void cross_entropy(const LoomKernelCall& c) {
  const Problem p = read_problem(c, "cross_entropy", 0);
  const LoomTensorDesc& out = c.outputs[0];
  if (plugin::numel(out) != (p.reduction == Reduction::None ? p.samples() : 1)) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu cross_entropy: output has %lld elements, expected %lld",
         static_cast<long long>(plugin::numel(out)),
         static_cast<long long>(p.reduction == Reduction::None ? p.samples() : 1));
  // read_problem declined every dtype but these two.
  if (p.input->dtype == LOOM_DTYPE_FLOAT32) forward_typed<float>(p, out);
  else forward_typed<double>(p, out);
}

void cross_entropy_backward(const LoomKernelCall& c) {
  const Problem p = read_problem(c, "_cross_entropy_backward", 1);
  const LoomTensorDesc& grad = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  if (grad.dtype != p.input->dtype ||
      plugin::numel(grad) != (p.reduction == Reduction::None ? p.samples() : 1)) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu _cross_entropy_backward: grad_output must be %lld elements of dtype %s",
         static_cast<long long>(p.reduction == Reduction::None ? p.samples() : 1),
         plugin::dtype_name(p.input->dtype));
  expect_like(*p.input, out, "_cross_entropy_backward");
  if (p.input->dtype == LOOM_DTYPE_FLOAT32) backward_typed<float>(p, grad, out);
  else backward_typed<double>(p, grad, out);
}

void register_cross_entropy_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  // Fused for class-index targets, contiguous for the same reason as
  // layer_norm; the 16-bit floats and probability targets run the core's
  // composites.
  constexpr uint64_t kF32F64 = LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32) | LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT64);
  r.kernel("cross_entropy", "cpu", kernel<cross_entropy>, kF32F64, LOOM_KERNEL_CONTIGUOUS_ONLY);
  r.kernel("_cross_entropy_backward", "cpu", kernel<cross_entropy_backward>, kF32F64, LOOM_KERNEL_CONTIGUOUS_ONLY);
}

}  // namespace loom::cpu
