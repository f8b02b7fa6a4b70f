// batch_norm and _batch_norm_backward on the CPU (docs/kernel_conventions.md,
// "Nn"; the composites in core/src/ops/ops_batch_norm.cpp are what these
// match). The composites take about ten elementwise ops and reductions each
// way; these take one sweep per statistic over each channel, while the
// channel is still in cache.
//
// An input [N, C, *] is seen as N x C planes of S contiguous elements (S the
// product of the trailing sizes), at any batch and channel strides: plain
// NCHW tensors and batch or channel slices of them. batch_norm declines any
// other layout (a channels-last input, say), LOOM_STATUS_UNSUPPORTED, before
// anything is written, and the core runs the composite; the backward is
// CONTIGUOUS_ONLY.
//
// Statistics: per channel, two passes (mean, then the centred sum of
// squares), each plane summed in the compute type (float vectors for
// float32 and the 16-bit floats, double for float64) and the planes added
// in double. Channels are independent and split across threads. The
// running statistics (any floating dtype, shape and strides) are read and
// written element by element in their own dtype.
#include "common.hpp"
#include "kernels.hpp"
#include "nn.hpp"
#include "nn_math.hpp"
#include "nn_parallel.hpp"

#include <loom/plugin/cast.hpp>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace loom::cpu {
namespace {

using nnmath::acc_t;

// A [N, C, *] tensor as planes: plane (n, c) starts at data + n*sn + c*sc.
template <class T>
struct Planes {
  T* data = nullptr;
  int64_t sn = 0, sc = 0;
  T* plane(int64_t n, int64_t c) const { return data + n * sn + c * sc; }
};

// `t` as planes of S contiguous elements, or false when its trailing dims
// do not make one unit-stride run.
template <class T>
bool as_planes(const LoomTensorDesc& t, Planes<T>& p) {
  int64_t expected = 1;
  for (int32_t d = t.ndim - 1; d >= 2; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  p.data = plugin::data_ptr<T>(t);
  p.sn = t.strides[0];
  p.sc = t.strides[1];
  return true;
}

// Element `flat` (in row-major order) of a tensor of any shape and strides,
// in its own floating dtype, as a double; and the reverse.
int64_t element_offset(const LoomTensorDesc& t, int64_t flat) {
  int64_t off = 0;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    off += (flat % t.shape[d]) * t.strides[d];
    flat /= t.shape[d];
  }
  return off;
}

double read_element(const LoomTensorDesc& t, int64_t flat) {
  double v = 0;
  dispatch<DTypes::Floating>(t.dtype, "batch_norm", [&](auto tag) {
    using S = decltype(tag);
    v = static_cast<double>(to_arith(plugin::data_ptr<const S>(t)[element_offset(t, flat)]));
  });
  return v;
}

void write_element(const LoomTensorDesc& t, int64_t flat, double v) {
  dispatch<DTypes::Floating>(t.dtype, "batch_norm", [&](auto tag) {
    using S = decltype(tag);
    plugin::data_ptr<S>(t)[element_offset(t, flat)] = plugin::cast<S>(v);
  });
}

// A per-channel parameter (weight or bias, C elements of the input's
// dtype, contiguous or not) as a double, `fallback` when absent.
template <class T>
double param_at(const LoomTensorDesc& t, int64_t c, double fallback) {
  if (plugin::is_absent(t)) return fallback;
  return static_cast<double>(to_arith(plugin::data_ptr<const T>(t)[element_offset(t, c)]));
}

// ---- one plane ----------------------------------------------------------------------------
// A plane in the compute type: the data itself for float and double, else
// a float copy in `buf`.
template <class T>
const acc_t<T>* load_plane(const T* p, int64_t S, std::vector<float>& buf) {
  if constexpr (std::is_same_v<T, acc_t<T>>) {
    return p;
  } else {
    buf.resize(static_cast<size_t>(S));
    for (int64_t i = 0; i < S; ++i) buf[i] = static_cast<float>(to_arith(p[i]));
    return buf.data();
  }
}

template <int B, class A>
[[gnu::always_inline]] inline double plane_sum(const A* x, int64_t S) {
  if constexpr (std::is_same_v<A, float>) {
    return nnmath::sum_span<B>(x, S);
  } else {
    double s = 0;
    for (int64_t i = 0; i < S; ++i) s += x[i];
    return s;
  }
}

template <int B, class A>
[[gnu::always_inline]] inline double plane_sq_dev(const A* x, int64_t S, A mean) {
  if constexpr (std::is_same_v<A, float>) {
    return nnmath::sq_dev_span<B>(x, S, mean);
  } else {
    double q = 0;
    for (int64_t i = 0; i < S; ++i) q += (x[i] - mean) * (x[i] - mean);
    return q;
  }
}

template <int B, class A>
[[gnu::always_inline]] inline void plane_grad_sums(const A* g, const A* x, int64_t S, A mean, double& sg,
                                                   double& sgx) {
  if constexpr (std::is_same_v<A, float>) {
    float a, b;
    nnmath::grad_sums_span<B>(g, x, S, mean, a, b);
    sg += a;
    sgx += b;
  } else {
    double a = 0, b = 0;
    for (int64_t i = 0; i < S; ++i) {
      a += g[i];
      b += g[i] * (x[i] - mean);
    }
    sg += a;
    sgx += b;
  }
}

// Where a plane's results are computed: the plane itself for float and
// double, else `buf` (store_plane then writes it to the plane).
template <class T>
acc_t<T>* result_plane(T* plane, int64_t S, std::vector<float>& buf) {
  if constexpr (std::is_same_v<T, acc_t<T>>) {
    return plane;
  } else {
    buf.resize(static_cast<size_t>(S));
    return buf.data();
  }
}

// Writes the compute-type values `v` (which may be `buf`) to plane `out`.
template <class T>
void store_plane(T* out, const acc_t<T>* v, int64_t S) {
  if constexpr (!std::is_same_v<T, acc_t<T>>)
    for (int64_t i = 0; i < S; ++i) out[i] = plugin::cast<T>(v[i]);
}

// The shape both ops share: the input [N, C, *] as N x C planes of S
// elements, and the mode.
struct Extent {
  int64_t N, C, S;
  bool training;
};

// ---- batch_norm ---------------------------------------------------------------------------

template <class T>
struct Forward {
  Planes<const T> x;
  Planes<T> y;
  Extent e;
  const LoomTensorDesc *rm, *rv, *w, *b;  // each may be absent
  double momentum, eps;
};

// The batch's mean and biased variance of channel c.
template <int B, class T>
[[gnu::always_inline]] inline void channel_stats(const Planes<const T>& x, int64_t c, int64_t N, int64_t S,
                                                 std::vector<float>& buf, double& mean, double& var) {
  using A = acc_t<T>;
  double s = 0;
  for (int64_t n = 0; n < N; ++n) s += plane_sum<B>(load_plane(x.plane(n, c), S, buf), S);
  mean = s / static_cast<double>(N * S);
  double q = 0;
  for (int64_t n = 0; n < N; ++n) q += plane_sq_dev<B>(load_plane(x.plane(n, c), S, buf), S, static_cast<A>(mean));
  var = q / static_cast<double>(N * S);
}

template <int B, class T>
[[gnu::always_inline]] inline void forward_body(const Forward<T>& a, int64_t c0, int64_t c1) {
  using A = acc_t<T>;
  std::vector<float> buf, out;
  for (int64_t c = c0; c < c1; ++c) {
    double mean, var;
    if (a.e.training) {
      channel_stats<B>(a.x, c, a.e.N, a.e.S, buf, mean, var);
      const double n = static_cast<double>(a.e.N * a.e.S), m = a.momentum;
      if (!plugin::is_absent(*a.rm)) write_element(*a.rm, c, (1 - m) * read_element(*a.rm, c) + m * mean);
      if (!plugin::is_absent(*a.rv))
        write_element(*a.rv, c, (1 - m) * read_element(*a.rv, c) + m * var * n / (n - 1));
    } else {
      mean = read_element(*a.rm, c);
      var = read_element(*a.rv, c);
    }
    const double rstd = 1.0 / std::sqrt(var + a.eps);
    const A scale = static_cast<A>(param_at<T>(*a.w, c, 1.0) * rstd);
    const A shift = static_cast<A>(param_at<T>(*a.b, c, 0.0));
    const A mu = static_cast<A>(mean);
    for (int64_t n = 0; n < a.e.N; ++n) {
      const A* x = load_plane(a.x.plane(n, c), a.e.S, buf);
      A* y = result_plane(a.y.plane(n, c), a.e.S, out);
      for (int64_t i = 0; i < a.e.S; ++i) y[i] = (x[i] - mu) * scale + shift;
      store_plane(a.y.plane(n, c), y, a.e.S);
    }
  }
}

// ---- _batch_norm_backward -----------------------------------------------------------------

template <class T>
struct Backward {
  Planes<const T> g, x;
  Planes<T> dx;
  const LoomTensorDesc *gw, *gb;  // [C], any strides
  Extent e;
  const LoomTensorDesc *w, *rm, *rv;
  double eps;
};

// With x̂ = (x - mean)·rstd: grad_bias = Σ g, grad_weight = Σ g·x̂, and
// grad_input = w·rstd·(g - Σg/M - x̂·Σ(g·x̂)/M) in training (the batch's
// statistics depend on x), w·rstd·g in evaluation.
template <int B, class T>
[[gnu::always_inline]] inline void backward_body(const Backward<T>& a, int64_t c0, int64_t c1) {
  using A = acc_t<T>;
  std::vector<float> gbuf, xbuf, out;
  const double M = static_cast<double>(a.e.N * a.e.S);
  for (int64_t c = c0; c < c1; ++c) {
    double mean, var;
    if (a.e.training) {
      channel_stats<B>(a.x, c, a.e.N, a.e.S, xbuf, mean, var);
    } else {
      mean = read_element(*a.rm, c);
      var = read_element(*a.rv, c);
    }
    const double rstd = 1.0 / std::sqrt(var + a.eps);
    const A mu = static_cast<A>(mean);
    double sg = 0, sgx = 0;
    for (int64_t n = 0; n < a.e.N; ++n)
      plane_grad_sums<B>(load_plane(a.g.plane(n, c), a.e.S, gbuf), load_plane(a.x.plane(n, c), a.e.S, xbuf), a.e.S, mu,
                         sg, sgx);
    plugin::data_ptr<T>(*a.gb)[element_offset(*a.gb, c)] = plugin::cast<T>(sg);
    plugin::data_ptr<T>(*a.gw)[element_offset(*a.gw, c)] = plugin::cast<T>(sgx * rstd);
    const double k = param_at<T>(*a.w, c, 1.0) * rstd;
    // dx = k·g + kx·(x - mean) + k0: the training form expanded.
    const A kg = static_cast<A>(k);
    const A kx = a.e.training ? static_cast<A>(-k * rstd * rstd * sgx / M) : A(0);
    const A k0 = a.e.training ? static_cast<A>(-k * sg / M) : A(0);
    for (int64_t n = 0; n < a.e.N; ++n) {
      const A* g = load_plane(a.g.plane(n, c), a.e.S, gbuf);
      const A* x = load_plane(a.x.plane(n, c), a.e.S, xbuf);
      A* dx = result_plane(a.dx.plane(n, c), a.e.S, out);
      if (a.e.training) {
        for (int64_t i = 0; i < a.e.S; ++i) dx[i] = g[i] * kg + (x[i] - mu) * kx + k0;
      } else {
        for (int64_t i = 0; i < a.e.S; ++i) dx[i] = g[i] * kg;
      }
      store_plane(a.dx.plane(n, c), dx, a.e.S);
    }
  }
}

// Each body in the three vector widths (nn_math.hpp's pick_isa).
#define LOOM_BN_VARIANTS(Name, Args, body)                                                             \
  template <class T>                                                                                   \
  LOOM_NN_TARGET(LOOM_NN_AVX512) void Name##_512(const Args<T>& a, int64_t c0, int64_t c1) {           \
    body<64>(a, c0, c1);                                                                               \
  }                                                                                                    \
  template <class T>                                                                                   \
  LOOM_NN_TARGET(LOOM_NN_AVX2) void Name##_256(const Args<T>& a, int64_t c0, int64_t c1) {             \
    body<32>(a, c0, c1);                                                                               \
  }                                                                                                    \
  template <class T>                                                                                   \
  void Name##_128(const Args<T>& a, int64_t c0, int64_t c1) {                                          \
    body<16>(a, c0, c1);                                                                               \
  }                                                                                                    \
  template <class T>                                                                                   \
  void Name(const Args<T>& a, int64_t c0, int64_t c1) {                                                \
    static const auto fn = nnmath::pick_isa(&Name##_512<T>, &Name##_256<T>, &Name##_128<T>);          \
    fn(a, c0, c1);                                                                                     \
  }

LOOM_BN_VARIANTS(forward_channels, Forward, forward_body)
LOOM_BN_VARIANTS(backward_channels, Backward, backward_body)
#undef LOOM_BN_VARIANTS

// Channels split across threads, about kParallelGrain elements a chunk.
template <class F>
void over_channels(int64_t C, int64_t per_channel, F&& f) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_channel, 1));
  parallel_chunks(C, grain, f);
}

[[noreturn]] void decline_layout(const char* op, const char* what) {
  fail(LOOM_STATUS_UNSUPPORTED,
       "cpu %s: the %s's trailing dims are not one contiguous run per (batch, channel) plane (the composite runs)",
       op, what);
}

// The per-channel inputs [first, first + count): absent, or C elements of
// a floating dtype — the input's for weight and bias (inputs [params_begin,
// params_end)) — checked here, so nothing throws inside the threads.
void check_channels(const LoomKernelCall& c, const char* op, int first, int count, int params_begin, int params_end,
                    int64_t C, int32_t input_dtype) {
  for (int i = first; i < first + count; ++i) {
    const LoomTensorDesc& t = c.inputs[i];
    if (plugin::is_absent(t)) continue;
    if (plugin::numel(t) != C) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected input %d to have %lld elements (one per channel), got %lld",
           op, i, static_cast<long long>(C), static_cast<long long>(plugin::numel(t)));
    const bool param = i >= params_begin && i < params_end;
    if (!(plugin::kFloatingMask & plugin::dtype_bit(t.dtype)) || (param && t.dtype != input_dtype)) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected input %d to be %s, got %s", op, i,
           param ? plugin::dtype_name(input_dtype) : "floating", plugin::dtype_name(t.dtype));
  }
}

// Whether a running statistic can be written element by element: no
// broadcast (stride 0) dim, whose elements would all be one.
bool writable(const LoomTensorDesc& t) {
  for (int32_t d = 0; d < t.ndim; ++d)
    if (t.shape[d] > 1 && t.strides[d] == 0) return false;
  return true;
}

// `stats` is the index of running_mean (running_var follows), which
// evaluation mode needs.
Extent read_extent(const LoomKernelCall& c, const char* op, const LoomTensorDesc& in, int stats) {
  if (in.ndim < 2) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected an input of at least 2 dims, got %d", op, in.ndim);
  Extent e{in.shape[0], in.shape[1], 0, c.values[0].u.i != 0};
  e.S = e.N * e.C == 0 ? 0 : plugin::numel(in) / (e.N * e.C);
  if (!e.training && (plugin::is_absent(c.inputs[stats]) || plugin::is_absent(c.inputs[stats + 1]))) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: evaluation mode needs the running statistics", op);
  return e;
}

void batch_norm(const LoomKernelCall& c) {
  constexpr const char* op = "batch_norm";
  expect_arity(c, op, 5, 1);
  expect_values(c, op, 3);
  const LoomTensorDesc& in = c.inputs[0];
  expect_like(in, c.outputs[0], op);
  const Extent e = read_extent(c, op, in, 1);
  check_channels(c, op, 1, 4, 3, 5, e.C, in.dtype);  // weight and bias: inputs 3, 4
  if (e.N * e.C * e.S == 0) return;
  if (e.training)
    for (int i = 1; i < 3; ++i)
      if (!plugin::is_absent(c.inputs[i]) && !writable(c.inputs[i]))
        fail(LOOM_STATUS_UNSUPPORTED, "cpu %s: a running statistic has a broadcast dim (the composite runs)", op);
  dispatch<DTypes::Floating>(in.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    Forward<T> a{};
    if (!as_planes(in, a.x)) decline_layout(op, "input");
    if (!as_planes(c.outputs[0], a.y)) decline_layout(op, "output");
    a.e = e;
    a.rm = &c.inputs[1];
    a.rv = &c.inputs[2];
    a.w = &c.inputs[3];
    a.b = &c.inputs[4];
    a.momentum = plugin::value_float(c, 1);
    a.eps = plugin::value_float(c, 2);
    over_channels(e.C, e.N * e.S, [&](int64_t c0, int64_t c1) { forward_channels(a, c0, c1); });
  });
}

void batch_norm_backward(const LoomKernelCall& c) {
  constexpr const char* op = "_batch_norm_backward";
  expect_arity(c, op, 5, 3);
  expect_values(c, op, 2);
  const LoomTensorDesc& in = c.inputs[1];
  expect_like(c.inputs[0], in, op);
  expect_like(in, c.outputs[0], op);
  const Extent e = read_extent(c, op, in, 3);
  check_channels(c, op, 2, 3, 2, 3, e.C, in.dtype);  // weight: input 2
  for (int i = 1; i < 3; ++i) {
    const LoomTensorDesc& o = c.outputs[i];
    if (plugin::numel(o) != e.C || o.dtype != in.dtype) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: output %d must be %lld elements of dtype %s", op, i,
           static_cast<long long>(e.C), plugin::dtype_name(in.dtype));
  }
  dispatch<DTypes::Floating>(in.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    Backward<T> a{};
    a.gw = &c.outputs[1];
    a.gb = &c.outputs[2];
    if (e.N * e.S == 0) {  // no values: the sums are 0
      for (int64_t i = 0; i < e.C; ++i)
        for (const LoomTensorDesc* o : {a.gw, a.gb}) plugin::data_ptr<T>(*o)[element_offset(*o, i)] = plugin::cast<T>(0.0);
      return;
    }
    if (!as_planes(c.inputs[0], a.g)) decline_layout(op, "grad_output");
    if (!as_planes(in, a.x)) decline_layout(op, "input");
    if (!as_planes(c.outputs[0], a.dx)) decline_layout(op, "grad_input");
    a.e = e;
    a.w = &c.inputs[2];
    a.rm = &c.inputs[3];
    a.rv = &c.inputs[4];
    a.eps = plugin::value_float(c, 1);
    over_channels(e.C, e.N * e.S, [&](int64_t c0, int64_t c1) { backward_channels(a, c0, c1); });
  });
}

}  // namespace

void register_batch_norm_kernels(plugin::Registrar& r) {
  // batch_norm is not CONTIGUOUS_ONLY: it writes the running statistics in
  // place (a contiguous copy's update would be lost), and takes batch or
  // channel slices as they are. The backward writes no argument, and its
  // grad_output is often a broadcast (a sum's gradient): the core hands
  // over contiguous copies.
  r.kernel("batch_norm", "cpu", plugin::kernel<batch_norm>, kFloatingMask);
  r.kernel("_batch_norm_backward", "cpu", plugin::kernel<batch_norm_backward>, kFloatingMask,
           LOOM_KERNEL_CONTIGUOUS_ONLY);
}

}  // namespace loom::cpu
