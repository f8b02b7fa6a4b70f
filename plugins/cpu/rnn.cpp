// rnn.cpp — _rnn and _rnn_backward fused, for float32 (docs/kernel_conventions.md,
// "RNN"; the core's composite in core/src/ops/ops_rnn.cpp is the reference).
// Other dtypes are declined: the core runs its composite for them.
//
// Per layer and direction, every step's input projection is one GEMM over
// all rows (x W_ih^T, with the biases folded in: both for LSTM and RNN, all
// but the n gate's hidden bias for GRU), then each step is one GEMM with
// W_hh and one pass of the gate math over its rows. Rows are time-major
// (row t*N + n), or the packed input's rows, batch_sizes[t] of them at step
// t: the state's first batch_sizes[t] rows advance, the rest keep theirs.
//
// The backward recomputes the forward, keeping per row what the gates'
// derivatives need (their activations, the states before and after), then
// walks the steps in reverse per layer and direction: the gate gradients of
// a step's rows, and the state's gradient through one GEMM with W_hh. The
// weight gradients are then one GEMM each over all rows: dG^T x and
// dG_h^T h_prev; the input gradient dG W_ih feeds the layer below.
#include "common.hpp"
#include "kernels.hpp"
#include "loops.hpp"  // LOOM_CPU_CLONES
#include "matmul.hpp"
#include "nn.hpp"
#include "nn_math.hpp"

#include <cmath>
#include <cstring>
#include <string_view>
#include <vector>

namespace loom::cpu {
namespace {

enum class Mode { LSTM, GRU, Tanh, Relu };

struct Rnn {
  Mode mode = Mode::LSTM;
  int64_t G = 4, L = 1, D = 1, T = 0, N = 0, in = 0, H = 0;
  bool bias = true, batch_first = false, packed = false;
  std::vector<int64_t> bs, off;  // rows of each step and the first row of each (off[T] = all rows)
  int64_t rows() const { return off.back(); }
  int64_t per_cell() const { return bias ? 4 : 2; }
  int64_t layer_in(int64_t l) const { return l == 0 ? in : D * H; }
};

Rnn read(const LoomKernelCall& c, int32_t first, const char* op) {
  expect_values(c, op, 7);
  const LoomValue* v = c.values;
  Rnn r;
  const std::string_view m(v[1].u.str.data, static_cast<size_t>(v[1].u.str.size));
  r.mode = m == "LSTM" ? Mode::LSTM : m == "GRU" ? Mode::GRU : m == "RNN_TANH" ? Mode::Tanh : Mode::Relu;
  if (m != "LSTM" && m != "GRU" && m != "RNN_TANH" && m != "RNN_RELU")
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: unknown mode '%.*s'", op, static_cast<int>(m.size()), m.data());
  r.G = r.mode == Mode::LSTM ? 4 : r.mode == Mode::GRU ? 3 : 1;
  r.bias = v[2].u.i != 0;
  r.L = v[3].u.i;
  r.D = v[4].u.i ? 2 : 1;
  r.batch_first = v[5].u.i != 0;
  r.packed = v[6].kind == LOOM_VALUE_INT_LIST;
  const LoomTensorDesc& x = c.inputs[first];
  const LoomTensorDesc& hx = c.inputs[first + 1];
  r.H = hx.shape[2];
  if (r.packed) {
    r.bs.assign(v[6].u.ints.data, v[6].u.ints.data + v[6].u.ints.size);
    r.T = static_cast<int64_t>(r.bs.size());
    r.N = r.bs[0];
    r.in = x.shape[1];
  } else {
    r.T = x.shape[r.batch_first ? 1 : 0];
    r.N = x.shape[r.batch_first ? 0 : 1];
    r.in = x.shape[2];
    r.bs.assign(static_cast<size_t>(r.T), r.N);
  }
  r.off.assign(static_cast<size_t>(r.T) + 1, 0);
  for (int64_t t = 0; t < r.T; ++t) r.off[t + 1] = r.off[t] + r.bs[t];
  const int32_t want = first + 3 + static_cast<int32_t>(r.L * r.D * r.per_cell());
  if (c.num_inputs != want)
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected %d inputs, got %d", op, want, c.num_inputs);
  return r;
}

struct Weights {
  const float *w_ih, *w_hh, *b_ih, *b_hh;
};

Weights weights_of(const LoomKernelCall& c, int32_t first_param, const Rnn& r, int64_t l, int64_t d) {
  const int32_t at = first_param + static_cast<int32_t>((l * r.D + d) * r.per_cell());
  Weights w{plugin::data_ptr<const float>(c.inputs[at]), plugin::data_ptr<const float>(c.inputs[at + 1]), nullptr,
            nullptr};
  if (r.bias) {
    w.b_ih = plugin::data_ptr<const float>(c.inputs[at + 2]);
    w.b_hh = plugin::data_ptr<const float>(c.inputs[at + 3]);
  }
  return w;
}

// Float sigmoid from nn_math.hpp's exp_f (whose argument must be <= 0),
// branch-free so a row's loop vectorises; within a few ulp. tanh_f is
// nn_math.hpp's, the tanh op's own.
[[gnu::always_inline]] inline float sigmoid_f(float x) {
  const float e = nnmath::exp_f(-std::fabs(x));  // e^-|x| in (0, 1]
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}
using nnmath::tanh_f;

// One step's gate math for one row of H units: xr, hr are the row's input
// and hidden projections (G*H each); h (and c) the row's state, updated;
// y the output row; g / cs / hn_save what the backward keeps (scratch when
// nothing is kept: unconditional stores let the loop vectorise).
LOOM_CPU_CLONES void lstm_row(const float* __restrict xr, const float* __restrict hr, float* __restrict c,
                              float* __restrict h, float* __restrict y, float* __restrict g, float* __restrict cs,
                              int64_t H) {
#pragma omp simd
  for (int64_t k = 0; k < H; ++k) {
    const float ig = sigmoid_f(xr[k] + hr[k]), fg = sigmoid_f(xr[H + k] + hr[H + k]);
    const float gg = tanh_f(xr[2 * H + k] + hr[2 * H + k]), og = sigmoid_f(xr[3 * H + k] + hr[3 * H + k]);
    const float cn = fg * c[k] + ig * gg;
    const float hnew = og * tanh_f(cn);
    c[k] = cn;
    h[k] = hnew;
    y[k] = hnew;
    g[k] = ig, g[H + k] = fg, g[2 * H + k] = gg, g[3 * H + k] = og;
    cs[k] = cn;
  }
}

LOOM_CPU_CLONES void gru_row(const float* __restrict xr, const float* __restrict hr, const float* __restrict b_hn,
                             float* __restrict h, float* __restrict y, float* __restrict g, float* __restrict hn_save,
                             int64_t H) {
#pragma omp simd
  for (int64_t k = 0; k < H; ++k) {
    const float rg = sigmoid_f(xr[k] + hr[k]), zg = sigmoid_f(xr[H + k] + hr[H + k]);
    const float hn = hr[2 * H + k] + b_hn[k];
    const float ng = tanh_f(xr[2 * H + k] + rg * hn);
    const float hnew = ng + zg * (h[k] - ng);
    h[k] = hnew;
    y[k] = hnew;
    g[k] = rg, g[H + k] = zg, g[2 * H + k] = ng;
    hn_save[k] = hn;
  }
}

LOOM_CPU_CLONES void simple_row(bool relu, const float* __restrict xr, const float* __restrict hr,
                                float* __restrict h, float* __restrict y, float* __restrict g, int64_t H) {
#pragma omp simd
  for (int64_t k = 0; k < H; ++k) {
    const float pre = xr[k] + hr[k];
    const float hnew = relu ? std::max(0.0f, pre) : tanh_f(pre);
    h[k] = hnew;
    y[k] = hnew;
    g[k] = hnew;
  }
}

// What the backward keeps of one layer and direction, per row.
struct Saved {
  std::vector<float> gates;   // [rows, G*H] activations (GRU: r, z, n; RNN: h)
  std::vector<float> hn;      // GRU: [rows, H], the n gate's hidden projection h W_hn^T + b_hn
  std::vector<float> c;       // LSTM: [rows, H], the cell state after the step
  std::vector<float> h_prev;  // [rows, H], the state the step started from
  std::vector<float> c_prev;  // LSTM: [rows, H]
};

// One layer, one direction: x [rows, in_l] -> y's column block d*H of
// [rows, D*H]; h (and c) [N, H] are the initial state in, the final out.
void run_layer(const Rnn& r, const Weights& w, int64_t in_l, const float* x, float* y, int64_t d, float* h,
               float* c, Saved* save) {
  const int64_t H = r.H, GH = r.G * H, S = r.rows(), DH = r.D * H;
  std::vector<float> xg(static_cast<size_t>(S * GH)), hg(static_cast<size_t>(r.N * GH));
  gemm_f32(false, true, S, GH, in_l, x, in_l, w.w_ih, in_l, 0.0f, xg.data(), GH);
  if (r.bias) {
    // Both biases in the input projection, but for GRU's n gate, whose
    // hidden bias sits inside r * (h W_hn^T + b_hn).
    const int64_t folded = r.mode == Mode::GRU ? 2 * H : GH;
#pragma omp parallel for if (S * GH > kParallelGrain)
    for (int64_t i = 0; i < S; ++i) {
      float* row = xg.data() + i * GH;
      for (int64_t k = 0; k < GH; ++k) row[k] += w.b_ih[k] + (k < folded ? w.b_hh[k] : 0.0f);
    }
  }
  if (save) {
    save->gates.resize(static_cast<size_t>(S * GH));
    save->h_prev.resize(static_cast<size_t>(S * H));
    if (r.mode == Mode::LSTM) save->c.resize(static_cast<size_t>(S * H)), save->c_prev.resize(static_cast<size_t>(S * H));
    if (r.mode == Mode::GRU) save->hn.resize(static_cast<size_t>(S * H));
  }
  std::vector<float> scratch_gates(save ? 0 : static_cast<size_t>(r.N * GH));
  std::vector<float> scratch_h(save ? 0 : static_cast<size_t>(r.N * H));
  std::vector<float> zero_bias(r.mode == Mode::GRU && !r.bias ? static_cast<size_t>(H) : 0);
  const bool reverse = d == 1;
  for (int64_t s = 0; s < r.T; ++s) {
    const int64_t t = reverse ? r.T - 1 - s : s;
    const int64_t b = r.bs[t], base = r.off[t];
    gemm_f32(false, true, b, GH, H, h, H, w.w_hh, H, 0.0f, hg.data(), GH);
    if (save) {
      std::memcpy(save->h_prev.data() + base * H, h, sizeof(float) * b * H);
      if (r.mode == Mode::LSTM) std::memcpy(save->c_prev.data() + base * H, c, sizeof(float) * b * H);
    }
#pragma omp parallel for if (b * GH > kParallelGrain / 4)
    for (int64_t i = 0; i < b; ++i) {
      const int64_t row = base + i;
      const int64_t keep = save ? row : i;  // the row's slot in the kept or scratch buffers
      const float* xr = xg.data() + row * GH;
      const float* hr = hg.data() + i * GH;
      float* yrow = y + row * DH + d * H;
      float* g = (save ? save->gates.data() : scratch_gates.data()) + keep * GH;
      switch (r.mode) {
        case Mode::LSTM:
          lstm_row(xr, hr, c + i * H, h + i * H, yrow, g, (save ? save->c.data() : scratch_h.data()) + keep * H, H);
          break;
        case Mode::GRU:
          gru_row(xr, hr, r.bias ? w.b_hh + 2 * H : zero_bias.data(), h + i * H, yrow, g,
                  (save ? save->hn.data() : scratch_h.data()) + keep * H, H);
          break;
        default: simple_row(r.mode == Mode::Relu, xr, hr, h + i * H, yrow, g, H); break;
      }
    }
  }
}

// One step's gate gradients for one row (the backward of the *_row
// functions): dy the output row's gradient, dh the state's (from the step
// after); writes dg (input side) and, for GRU, dgh (hidden side) and
// direct (dh's path around W_hh); carries LSTM's dc back.
LOOM_CPU_CLONES void lstm_row_backward(const float* __restrict g, const float* __restrict c_t,
                                       const float* __restrict c_prev, const float* __restrict dy,
                                       const float* __restrict dh, float* __restrict dc, float* __restrict dg,
                                       int64_t H) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    const float dht = dy[j] + dh[j];
    const float ig = g[j], fg = g[H + j], gg = g[2 * H + j], og = g[3 * H + j];
    const float tc = tanh_f(c_t[j]);
    const float dct = dc[j] + dht * og * (1.0f - tc * tc);
    dg[j] = dct * gg * ig * (1.0f - ig);
    dg[H + j] = dct * c_prev[j] * fg * (1.0f - fg);
    dg[2 * H + j] = dct * ig * (1.0f - gg * gg);
    dg[3 * H + j] = dht * tc * og * (1.0f - og);
    dc[j] = dct * fg;
  }
}

LOOM_CPU_CLONES void gru_row_backward(const float* __restrict g, const float* __restrict h_prev,
                                      const float* __restrict hn, const float* __restrict dy,
                                      const float* __restrict dh, float* __restrict dg, float* __restrict dgh,
                                      float* __restrict direct, int64_t H) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    const float dht = dy[j] + dh[j];
    const float rg = g[j], zg = g[H + j], ng = g[2 * H + j];
    const float dn = dht * (1.0f - zg) * (1.0f - ng * ng);
    const float dz = dht * (h_prev[j] - ng) * zg * (1.0f - zg);
    const float dr = dn * hn[j] * rg * (1.0f - rg);
    dg[j] = dr, dg[H + j] = dz, dg[2 * H + j] = dn;
    dgh[j] = dr, dgh[H + j] = dz, dgh[2 * H + j] = dn * rg;
    direct[j] = dht * zg;
  }
}

LOOM_CPU_CLONES void simple_row_backward(bool relu, const float* __restrict h_t, const float* __restrict dy,
                                         const float* __restrict dh, float* __restrict dg, int64_t H) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    const float dht = dy[j] + dh[j];
    dg[j] = relu ? (h_t[j] > 0.0f ? dht : 0.0f) : dht * (1.0f - h_t[j] * h_t[j]);
  }
}

// [N, T, W] batch-first rows to time-major [T, N, W] (or back with to_batch_first).
void transpose_rows(const float* src, float* dst, int64_t T, int64_t N, int64_t W, bool to_batch_first) {
#pragma omp parallel for if (T * N * W > kParallelGrain)
  for (int64_t t = 0; t < T; ++t)
    for (int64_t n = 0; n < N; ++n) {
      const float* s = to_batch_first ? src + (t * N + n) * W : src + (n * T + t) * W;
      float* o = to_batch_first ? dst + (n * T + t) * W : dst + (t * N + n) * W;
      std::memcpy(o, s, sizeof(float) * W);
    }
}

void require_f32(const LoomKernelCall& c, int32_t first, const char* op) {
  if (c.inputs[first].dtype != LOOM_DTYPE_FLOAT32)
    fail(LOOM_STATUS_UNSUPPORTED, "cpu %s: fused for float32 only (the core's composite runs %s)", op,
         plugin::dtype_name(c.inputs[first].dtype));
}

// The forward of every layer: the input's time-major rows in, the last
// layer's rows out; `layers` (when given) keeps every layer's input rows
// and what each layer and direction saved.
std::vector<float> forward_all(const LoomKernelCall& c, const Rnn& r, int32_t first, float* hy, float* cy,
                               std::vector<std::vector<float>>* layer_inputs, std::vector<Saved>* saved) {
  const int64_t S = r.rows(), H = r.H, DH = r.D * H, state = r.N * H;
  const float* x = plugin::data_ptr<const float>(c.inputs[first]);
  std::vector<float> cur(static_cast<size_t>(S * r.in));
  if (!r.packed && r.batch_first) transpose_rows(x, cur.data(), r.T, r.N, r.in, false);
  else std::memcpy(cur.data(), x, sizeof(float) * S * r.in);
  const float* hx = plugin::data_ptr<const float>(c.inputs[first + 1]);
  const float* cx = r.mode == Mode::LSTM ? plugin::data_ptr<const float>(c.inputs[first + 2]) : nullptr;
  std::memcpy(hy, hx, sizeof(float) * r.L * r.D * state);
  if (cx) std::memcpy(cy, cx, sizeof(float) * r.L * r.D * state);
  for (int64_t l = 0; l < r.L; ++l) {
    std::vector<float> out(static_cast<size_t>(S * DH));
    for (int64_t d = 0; d < r.D; ++d) {
      const int64_t k = l * r.D + d;
      Saved* save = saved ? &(*saved)[static_cast<size_t>(k)] : nullptr;
      run_layer(r, weights_of(c, first + 3, r, l, d), r.layer_in(l), cur.data(), out.data(), d, hy + k * state,
                cx ? cy + k * state : nullptr, save);
    }
    if (layer_inputs) layer_inputs->push_back(std::move(cur));
    cur = std::move(out);
  }
  return cur;
}

}  // namespace

// inputs: input, hx, cx, params...; outputs: output, hy, cy.
void rnn(const LoomKernelCall& c) {
  require_f32(c, 0, "_rnn");
  const Rnn r = read(c, 0, "_rnn");
  float* out = plugin::data_ptr<float>(c.outputs[0]);
  const std::vector<float> y = forward_all(c, r, 0, plugin::data_ptr<float>(c.outputs[1]),
                                           r.mode == Mode::LSTM ? plugin::data_ptr<float>(c.outputs[2]) : nullptr,
                                           nullptr, nullptr);
  if (!r.packed && r.batch_first) transpose_rows(y.data(), out, r.T, r.N, r.D * r.H, true);
  else std::memcpy(out, y.data(), sizeof(float) * y.size());
}

// inputs: grad_output, grad_hy?, grad_cy?, input, hx, cx?, params...;
// outputs: grad_input, grad_hx, grad_cx, grad_params (flat, params' order).
void rnn_backward(const LoomKernelCall& c) {
  require_f32(c, 3, "_rnn_backward");
  const Rnn r = read(c, 3, "_rnn_backward");
  const int64_t S = r.rows(), H = r.H, GH = r.G * H, DH = r.D * H, state = r.N * H;
  const bool lstm = r.mode == Mode::LSTM;
  std::vector<float> hy(static_cast<size_t>(r.L * r.D * state)), cy(lstm ? hy.size() : 0);
  std::vector<std::vector<float>> xs;
  std::vector<Saved> saved(static_cast<size_t>(r.L * r.D));
  forward_all(c, r, 3, hy.data(), lstm ? cy.data() : nullptr, &xs, &saved);

  // dY: the gradient of the current layer's output rows, time-major.
  std::vector<float> dy(static_cast<size_t>(S * DH));
  const float* go = plugin::data_ptr<const float>(c.inputs[0]);
  if (!r.packed && r.batch_first) transpose_rows(go, dy.data(), r.T, r.N, DH, false);
  else std::memcpy(dy.data(), go, sizeof(float) * dy.size());
  const float* ghy = plugin::is_absent(c.inputs[1]) ? nullptr : plugin::data_ptr<const float>(c.inputs[1]);
  const float* gcy = !lstm || plugin::is_absent(c.inputs[2]) ? nullptr : plugin::data_ptr<const float>(c.inputs[2]);
  float* ghx = plugin::data_ptr<float>(c.outputs[1]);
  float* gcx = lstm ? plugin::data_ptr<float>(c.outputs[2]) : nullptr;
  float* gp = plugin::data_ptr<float>(c.outputs[3]);

  std::vector<float> dg(static_cast<size_t>(S * GH)), dgh(r.mode == Mode::GRU ? dg.size() : 0);
  std::vector<float> dh(static_cast<size_t>(state)), dc(static_cast<size_t>(state)), direct(static_cast<size_t>(state));
  for (int64_t l = r.L - 1; l >= 0; --l) {
    const int64_t in_l = r.layer_in(l);
    std::vector<float> dx(static_cast<size_t>(S * in_l));
    for (int64_t d = 0; d < r.D; ++d) {
      const int64_t k = l * r.D + d;
      const Weights w = weights_of(c, 6, r, l, d);
      const Saved& sv = saved[static_cast<size_t>(k)];
      float* dgate_h = r.mode == Mode::GRU ? dgh.data() : dg.data();  // LSTM, RNN: the same gradient both sides
      if (ghy) std::memcpy(dh.data(), ghy + k * state, sizeof(float) * state);
      else std::fill(dh.begin(), dh.end(), 0.0f);
      if (gcy) std::memcpy(dc.data(), gcy + k * state, sizeof(float) * state);
      else std::fill(dc.begin(), dc.end(), 0.0f);
      const bool reverse = d == 1;
      for (int64_t s = r.T - 1; s >= 0; --s) {  // the forward's steps, last first
        const int64_t t = reverse ? r.T - 1 - s : s;
        const int64_t b = r.bs[t], base = r.off[t];
#pragma omp parallel for if (b * GH > kParallelGrain / 4)
        for (int64_t i = 0; i < b; ++i) {
          const int64_t row = base + i;
          const float* g = sv.gates.data() + row * GH;
          const float* dyr = dy.data() + row * DH + d * H;
          switch (r.mode) {
            case Mode::LSTM:
              lstm_row_backward(g, sv.c.data() + row * H, sv.c_prev.data() + row * H, dyr, dh.data() + i * H,
                                dc.data() + i * H, dg.data() + row * GH, H);
              break;
            case Mode::GRU:
              gru_row_backward(g, sv.h_prev.data() + row * H, sv.hn.data() + row * H, dyr, dh.data() + i * H,
                               dg.data() + row * GH, dgh.data() + row * GH, direct.data() + i * H, H);
              break;
            default: simple_row_backward(r.mode == Mode::Relu, g, dyr, dh.data() + i * H, dg.data() + row * GH, H);
          }
        }
        // The state's gradient for the step before: through W_hh (plus h's
        // direct path in GRU's h' = n + z (h - n)).
        gemm_f32(false, false, b, H, GH, dgate_h + base * GH, GH, w.w_hh, H, 0.0f, dh.data(), H);
        if (r.mode == Mode::GRU)
          for (int64_t i = 0; i < b * H; ++i) dh[i] += direct[i];
      }
      std::memcpy(ghx + k * state, dh.data(), sizeof(float) * state);
      if (lstm) std::memcpy(gcx + k * state, dc.data(), sizeof(float) * state);
      // Weight gradients over every row at once; the flat output's slices
      // follow params' order (w_ih, w_hh, b_ih, b_hh).
      int64_t at = 0;
      for (int64_t ll = 0; ll < l; ++ll) at += r.D * (GH * r.layer_in(ll) + GH * H + (r.bias ? 2 * GH : 0));
      at += d * (GH * in_l + GH * H + (r.bias ? 2 * GH : 0));
      gemm_f32(true, false, GH, in_l, S, dg.data(), GH, xs[static_cast<size_t>(l)].data(), in_l, 0.0f, gp + at, in_l);
      gemm_f32(true, false, GH, H, S, dgate_h, GH, sv.h_prev.data(), H, 0.0f, gp + at + GH * in_l, H);
      if (r.bias) {
        float* db_ih = gp + at + GH * in_l + GH * H;
        float* db_hh = db_ih + GH;
        for (int64_t j = 0; j < GH; ++j) db_ih[j] = db_hh[j] = 0.0f;
        for (int64_t i = 0; i < S; ++i)
          for (int64_t j = 0; j < GH; ++j) {
            db_ih[j] += dg[i * GH + j];
            db_hh[j] += dgate_h[i * GH + j];
          }
      }
      // The layer input's gradient, summed over the directions.
      gemm_f32(false, false, S, in_l, GH, dg.data(), GH, w.w_ih, in_l, d == 0 ? 0.0f : 1.0f, dx.data(), in_l);
    }
    if (l > 0) {
      dy = std::move(dx);
    } else {
      float* gi = plugin::data_ptr<float>(c.outputs[0]);
      if (!r.packed && r.batch_first) transpose_rows(dx.data(), gi, r.T, r.N, r.in, true);
      else std::memcpy(gi, dx.data(), sizeof(float) * dx.size());
    }
  }
}

void register_rnn_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  // Fused recurrent layers: GEMMs over all rows plus one per step.
  constexpr uint64_t kF32 = LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32);
  r.kernel("_rnn", "cpu", kernel<rnn>, kF32, LOOM_KERNEL_CONTIGUOUS_ONLY);
  r.kernel("_rnn_backward", "cpu", kernel<rnn_backward>, kF32, LOOM_KERNEL_CONTIGUOUS_ONLY);
}

}  // namespace loom::cpu
