// ops_rnn.cpp — _rnn, the fused multi-layer RNN / LSTM / GRU op (see rnn.h),
// its composite forward, and the single-step cells (lstm_cell, gru_cell,
// rnn_tanh_cell, rnn_relu_cell) as composites.
//
// A device runs _rnn with a fused kernel of its own (the CPU plugin's, cuDNN
// on CUDA) or this composite: one matrix product projects every step's input
// at once, then each step is a matrix product with w_hh and the gate math.
// The derivative (ops_rnn_backward.cpp) is _rnn_backward, which a device may
// also fuse.
#include "core_op.h"
#include "rnn.h"

#include <loom/error.h>
#include <loom/ops.h>

namespace loom {
namespace detail::rnn {
namespace {

Mode mode_of(const std::string& op, std::string_view m) {
  if (m == "LSTM") return Mode::LSTM;
  if (m == "GRU") return Mode::GRU;
  if (m == "RNN_TANH") return Mode::RnnTanh;
  if (m == "RNN_RELU") return Mode::RnnRelu;
  throw Error(cat(op, ": unknown mode '", m, "' (expected LSTM, GRU, RNN_TANH or RNN_RELU)"));
}

std::string_view str(const LoomValue& v) { return {v.u.str.data, static_cast<size_t>(v.u.str.size)}; }

void check_shape(const std::string& op, const char* what, const Tensor& t, IntArrayRef want) {
  LOOM_CHECK(t.sizes() == want, op, ": expected ", what, " of shape ", shape_str(want), ", got ", shape_str(t.sizes()));
}

}  // namespace

// One step of one cell on rows `x_proj` (the input already projected and
// biased) and state (h, c): the new (h, c). c is unused but for LSTM.
std::pair<Tensor, Tensor> cell_step(Mode mode, const Tensor& x_proj, const Tensor& h, const Tensor& c,
                                    const Tensor& w_hh, const Tensor* b_hh) {
  Tensor h_proj = matmul(h, w_hh.t());
  if (b_hh) h_proj = h_proj + *b_hh;
  switch (mode) {
    case Mode::LSTM: {
      const auto g = chunk(x_proj + h_proj, 4, 1);
      const Tensor c_next = sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2]);
      return {sigmoid(g[3]) * tanh(c_next), c_next};
    }
    case Mode::GRU: {
      const auto xg = chunk(x_proj, 3, 1), hg = chunk(h_proj, 3, 1);
      const Tensor r = sigmoid(xg[0] + hg[0]), z = sigmoid(xg[1] + hg[1]);
      const Tensor n = tanh(xg[2] + r * hg[2]);
      return {n + z * (h - n), c};
    }
    case Mode::RnnTanh: return {tanh(x_proj + h_proj), c};
    case Mode::RnnRelu: return {relu(x_proj + h_proj), c};
  }
  throw Error("rnn: unknown mode");
}

namespace {

// One direction of one layer. x: [T, N, in] or packed [S, in]; returns the
// outputs in x's layout and the final (h, c).
std::tuple<Tensor, Tensor, Tensor> run_direction(const Config& cfg, const Tensor& x, Tensor h, Tensor c,
                                                 const Tensor* const* p, bool reverse) {
  const Tensor& w_ih = *p[0];
  const Tensor& w_hh = *p[1];
  const Tensor* b_ih = cfg.has_biases ? p[2] : nullptr;
  const Tensor* b_hh = cfg.has_biases ? p[3] : nullptr;
  Tensor proj = matmul(x, w_ih.t());  // every step's input projection in one product
  if (b_ih) proj = proj + *b_ih;
  const int64_t T = cfg.steps, N = cfg.batch;
  std::vector<Tensor> outs(static_cast<size_t>(T));
  std::vector<int64_t> offset(static_cast<size_t>(T) + 1, 0);
  if (cfg.packed)
    for (int64_t t = 0; t < T; ++t) offset[t + 1] = offset[t] + cfg.batch_sizes[static_cast<size_t>(t)];
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    if (!cfg.packed) {
      std::tie(h, c) = cell_step(cfg.mode, proj.select(0, t), h, c, w_hh, b_hh);
      outs[static_cast<size_t>(t)] = h;
      continue;
    }
    // Packed: the first b rows are the sequences still running at step t
    // (sorted by length); the others keep their state.
    const int64_t b = cfg.batch_sizes[static_cast<size_t>(t)];
    const Tensor rows = proj.narrow(0, offset[t], b);
    const bool lstm = cfg.mode == Mode::LSTM;
    auto [h_b, c_b] = cell_step(cfg.mode, rows, h.narrow(0, 0, b), lstm ? c.narrow(0, 0, b) : c, w_hh, b_hh);
    outs[static_cast<size_t>(t)] = h_b;
    h = b == N ? h_b : loom::cat({h_b, h.narrow(0, b, N - b)}, 0);
    if (lstm) c = b == N ? c_b : loom::cat({c_b, c.narrow(0, b, N - b)}, 0);
  }
  Tensor out = cfg.packed ? loom::cat(outs, 0) : stack(outs, 0);
  return {out, h, c};
}

}  // namespace

Config parse(const std::string& op, const LoomValue* v, const Tensor& input, const Tensor& hx, const Tensor* cx,
             const std::vector<const Tensor*>& params) {
  Config c;
  c.mode = mode_of(op, str(v[1]));
  c.has_biases = v[2].u.i != 0;
  c.layers = v[3].u.i;
  c.bidirectional = v[4].u.i != 0;
  c.batch_first = v[5].u.i != 0;
  c.packed = v[6].kind == LOOM_VALUE_INT_LIST;
  LOOM_CHECK(c.layers >= 1, op, ": num_layers must be at least 1, got ", c.layers);
  LOOM_CHECK(input.is_floating_point(), op, ": expected a floating point input, got ", name(input.dtype()));
  if (c.packed) {
    c.batch_sizes.assign(v[6].u.ints.data, v[6].u.ints.data + v[6].u.ints.size);
    LOOM_CHECK(input.dim() == 2, op, ": a packed input is 2-d [sum(batch_sizes), input_size], got ",
               shape_str(input.sizes()));
    LOOM_CHECK(!c.batch_sizes.empty(), op, ": batch_sizes is empty");
    int64_t total = 0;
    for (size_t t = 0; t < c.batch_sizes.size(); ++t) {
      LOOM_CHECK(c.batch_sizes[t] >= 1 && (t == 0 || c.batch_sizes[t] <= c.batch_sizes[t - 1]), op,
                 ": batch_sizes must be positive and non-increasing, got ", shape_str(c.batch_sizes));
      total += c.batch_sizes[t];
    }
    LOOM_CHECK(total == input.size(0), op, ": batch_sizes sum to ", total, " but the packed input has ",
               input.size(0), " rows");
    c.steps = static_cast<int64_t>(c.batch_sizes.size());
    c.batch = c.batch_sizes[0];
    c.input_size = input.size(1);
  } else {
    LOOM_CHECK(input.dim() == 3, op, ": expected a 3-d input ([T, N, input_size], or [N, T, input_size] with "
               "batch_first), got ", shape_str(input.sizes()));
    c.steps = input.size(c.batch_first ? 1 : 0);
    c.batch = input.size(c.batch_first ? 0 : 1);
    c.input_size = input.size(2);
  }
  LOOM_CHECK(hx.dim() == 3, op, ": expected hx of shape [num_layers * directions, batch, hidden], got ",
             shape_str(hx.sizes()));
  c.hidden = hx.size(2);
  const int64_t LD = c.layers * c.directions();
  check_shape(op, "hx", hx, DimVector{LD, c.batch, c.hidden});
  if (c.mode == Mode::LSTM) {
    LOOM_CHECK(cx && cx->defined(), op, ": LSTM needs cx (the initial cell state)");
    check_shape(op, "cx", *cx, DimVector{LD, c.batch, c.hidden});
  }
  const size_t want = static_cast<size_t>(LD * c.tensors_per_cell());
  LOOM_CHECK(params.size() == want, op, ": expected ", want, " parameter tensors (", c.layers, " layers x ",
             c.directions(), " directions x ", c.tensors_per_cell(), "), got ", params.size());
  const int64_t GH = c.gates() * c.hidden;
  for (int64_t l = 0; l < c.layers; ++l)
    for (int64_t d = 0; d < c.directions(); ++d) {
      const size_t at = static_cast<size_t>((l * c.directions() + d) * c.tensors_per_cell());
      const int64_t in = l == 0 ? c.input_size : c.directions() * c.hidden;
      const std::string where = cat("layer ", l, d ? " (reverse)" : "");
      check_shape(op, (where + " w_ih").c_str(), *params[at], DimVector{GH, in});
      check_shape(op, (where + " w_hh").c_str(), *params[at + 1], DimVector{GH, c.hidden});
      if (c.has_biases) {
        check_shape(op, (where + " b_ih").c_str(), *params[at + 2], DimVector{GH});
        check_shape(op, (where + " b_hh").c_str(), *params[at + 3], DimVector{GH});
      }
    }
  auto same = [&](const Tensor& t, const char* what) {
    LOOM_CHECK(t.dtype() == input.dtype(), op, ": ", what, " is ", name(t.dtype()), " but the input is ",
               name(input.dtype()), " (every tensor of an RNN has one dtype)");
  };
  same(hx, "hx");
  if (cx && cx->defined()) same(*cx, "cx");
  for (const Tensor* p : params) same(*p, "a parameter");
  return c;
}

void push_values(OpCall& call, size_t num_params, const std::string& mode, bool has_biases, int64_t num_layers,
                 bool bidirectional, bool batch_first, std::optional<IntArrayRef> batch_sizes) {
  LoomValue list{};
  list.kind = LOOM_VALUE_TENSOR_LIST;
  list.u.i = static_cast<int64_t>(num_params);
  const LoomValue m = detail::string_value(mode);
  LoomValue layers{};
  layers.kind = LOOM_VALUE_INT;
  layers.u.i = num_layers;
  for (const LoomValue& v : {list, m, bool_value(has_biases), layers, bool_value(bidirectional), bool_value(batch_first),
                             batch_sizes ? int_list_value(*batch_sizes) : none_value()})
    call.values.push_back(v);
}

DimVector output_shape(const Config& c) {
  const int64_t width = c.directions() * c.hidden;
  if (c.packed) {
    int64_t rows = 0;
    for (int64_t b : c.batch_sizes) rows += b;
    return {rows, width};
  }
  return c.batch_first ? DimVector{c.batch, c.steps, width} : DimVector{c.steps, c.batch, width};
}

std::tuple<Tensor, Tensor, Tensor> forward(const Config& c, const Tensor& input, const Tensor& hx, const Tensor& cx,
                                           const std::vector<Tensor>& params) {
  const bool lstm = c.mode == Mode::LSTM;
  Tensor x = c.batch_first && !c.packed ? input.transpose(0, 1) : input;
  std::vector<Tensor> hys, cys;
  for (int64_t l = 0; l < c.layers; ++l) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < c.directions(); ++d) {
      const int64_t k = l * c.directions() + d;
      std::vector<const Tensor*> p;
      for (int64_t i = 0; i < c.tensors_per_cell(); ++i) p.push_back(&params[static_cast<size_t>(k * c.tensors_per_cell() + i)]);
      auto [out, h, cell] = run_direction(c, x, hx.select(0, k), lstm ? cx.select(0, k) : Tensor(), p.data(), d == 1);
      outs.push_back(out);
      hys.push_back(h);
      if (lstm) cys.push_back(cell);
    }
    x = outs.size() == 1 ? outs[0] : loom::cat(outs, -1);
  }
  Tensor output = c.batch_first && !c.packed ? x.transpose(0, 1).contiguous() : x;
  Tensor cy = lstm ? stack(cys, 0) : empty({0}, input.dtype(), input.device());
  return {output, stack(hys, 0), cy};
}

}  // namespace detail::rnn

namespace {

using namespace detail::rnn;

std::vector<const Tensor*> params_of(const OpCall& call, size_t first) {
  return {call.args.begin() + static_cast<std::ptrdiff_t>(first), call.args.end()};
}

void prepare_rnn(OpCall& call) {
  const Config c = parse(call.op->name(), call.values.data(), call.arg(0), call.arg(1), call.args[2],
                         params_of(call, 3));
  for (const Tensor* t : call.args) call.inputs.emplace_back().tensor = t && t->defined() ? t->impl() : nullptr;
  const DType dt = call.arg(0).dtype();
  call.compute_dtype = dt;
  const DimVector state{c.layers * c.directions(), c.batch, c.hidden};
  call.outputs.push_back({dt, output_shape(c), {}, {}});
  call.outputs.push_back({dt, state, {}, {}});
  call.outputs.push_back({dt, c.mode == Mode::LSTM ? state : DimVector{0}, {}, {}});
}

void rnn_composite(OpCall& call) {
  const Config c = parse(call.op->name(), call.values.data(), call.arg(0), call.arg(1), call.args[2],
                         params_of(call, 3));
  std::vector<Tensor> params;
  for (const Tensor* p : params_of(call, 3)) params.push_back(*p);
  const Tensor cx = call.args[2] && call.args[2]->defined() ? *call.args[2] : Tensor();
  auto [out, hy, cy] = forward(c, call.arg(0), call.arg(1), cx, params);
  call.outputs[0].result = out;
  call.outputs[1].result = hy;
  call.outputs[2].result = cy;
}

}  // namespace

const OpDef& rnn_op();
LOOM_CORE_OP(rnn_op,
             "_rnn(Tensor input, Tensor hx, Tensor? cx, Tensor[] params, str mode, bool has_biases, int num_layers, "
             "bool bidirectional, bool batch_first, int[]? batch_sizes=None) -> (Tensor output, Tensor hy, Tensor cy)",
             prepare_rnn, rnn_composite)

// ---------------------------------------------------------------------------------- cells
// lstm_cell(input, hx, cx, w_ih, w_hh, b_ih?, b_hh?) -> (hy, cy); gru_cell, rnn_tanh_cell and
// rnn_relu_cell(input, hx, w_ih, w_hh, b_ih?, b_hh?) -> hy. input [N, in], states [N, H].
// Composites, differentiated through their parts.

namespace {

void prepare_cell(OpCall& call) {
  const std::string& op = call.op->name();
  const bool lstm = op == "lstm_cell";
  const Tensor& input = call.arg(0);
  const Tensor& hx = call.arg(1);
  const size_t w = lstm ? 3 : 2;  // w_ih's argument index
  const Tensor& w_ih = call.arg(w);
  const Tensor& w_hh = call.arg(w + 1);
  const int64_t G = op == "lstm_cell" ? 4 : op == "gru_cell" ? 3 : 1;
  LOOM_CHECK(input.dim() == 2, op, ": expected a 2-d input [batch, input_size], got ", shape_str(input.sizes()));
  LOOM_CHECK(input.is_floating_point(), op, ": expected a floating point input, got ", name(input.dtype()));
  LOOM_CHECK(hx.dim() == 2 && hx.size(0) == input.size(0), op, ": expected hx of shape [", input.size(0),
             ", hidden_size], got ", shape_str(hx.sizes()));
  const int64_t H = hx.size(1);
  LOOM_CHECK(w_ih.sizes() == IntArrayRef(DimVector{G * H, input.size(1)}), op, ": expected w_ih of shape ",
             shape_str(DimVector{G * H, input.size(1)}), ", got ", shape_str(w_ih.sizes()));
  LOOM_CHECK(w_hh.sizes() == IntArrayRef(DimVector{G * H, H}), op, ": expected w_hh of shape ",
             shape_str(DimVector{G * H, H}), ", got ", shape_str(w_hh.sizes()));
  if (lstm)
    LOOM_CHECK(call.arg(2).sizes() == hx.sizes(), op, ": cx has shape ", shape_str(call.arg(2).sizes()),
               ", hx ", shape_str(hx.sizes()));
  for (size_t b = w + 2; b < w + 4; ++b)
    if (call.args[b] && call.args[b]->defined())
      LOOM_CHECK(call.args[b]->sizes() == IntArrayRef(DimVector{G * H}), op, ": expected biases of shape [", G * H,
                 "], got ", shape_str(call.args[b]->sizes()));
  call.compute_dtype = input.dtype();
  call.outputs.push_back({input.dtype(), DimVector(hx.sizes()), {}, {}});
  if (lstm) call.outputs.push_back({input.dtype(), DimVector(hx.sizes()), {}, {}});
}

void cell_composite(OpCall& call) {
  const std::string& op = call.op->name();
  const bool lstm = op == "lstm_cell";
  const size_t w = lstm ? 3 : 2;
  const Mode mode = lstm ? Mode::LSTM : op == "gru_cell" ? Mode::GRU : op == "rnn_tanh_cell" ? Mode::RnnTanh
                                                                                              : Mode::RnnRelu;
  const Tensor* b_ih = call.args[w + 2] && call.args[w + 2]->defined() ? call.args[w + 2] : nullptr;
  const Tensor* b_hh = call.args[w + 3] && call.args[w + 3]->defined() ? call.args[w + 3] : nullptr;
  const Tensor proj = linear(call.arg(0), call.arg(w), b_ih ? *b_ih : Tensor());
  auto [h, c] = detail::rnn::cell_step(mode, proj, call.arg(1), lstm ? call.arg(2) : Tensor(), call.arg(w + 1), b_hh);
  call.outputs[0].result = h;
  if (lstm) call.outputs[1].result = c;
}

}  // namespace

LOOM_CORE_OP(lstm_cell_op,
             "lstm_cell(Tensor input, Tensor hx, Tensor cx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "
             "Tensor? b_hh=None) -> (Tensor hy, Tensor cy)",
             prepare_cell, cell_composite)
LOOM_CORE_OP(gru_cell_op,
             "gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor",
             prepare_cell, cell_composite)
LOOM_CORE_OP(rnn_tanh_cell_op,
             "rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "
             "Tensor? b_hh=None) -> Tensor",
             prepare_cell, cell_composite)
LOOM_CORE_OP(rnn_relu_cell_op,
             "rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "
             "Tensor? b_hh=None) -> Tensor",
             prepare_cell, cell_composite)

std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                                    const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  OpCall call(lstm_cell_op());
  for (const Tensor* t : {&input, &hx, &cx, &w_ih, &w_hh, &b_ih, &b_hh}) call.args.push_back(t);
  dispatch(call);
  return {std::move(call.outputs[0].result), std::move(call.outputs[1].result)};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  return detail::run_op(gru_cell_op(), {&input, &hx, &w_ih, &w_hh, &b_ih, &b_hh});
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return detail::run_op(rnn_tanh_cell_op(), {&input, &hx, &w_ih, &w_hh, &b_ih, &b_hh});
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return detail::run_op(rnn_relu_cell_op(), {&input, &hx, &w_ih, &w_hh, &b_ih, &b_hh});
}

std::tuple<Tensor, Tensor, Tensor> _rnn(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                        const std::vector<Tensor>& params, const std::string& mode, bool has_biases,
                                        int64_t num_layers, bool bidirectional, bool batch_first,
                                        std::optional<IntArrayRef> batch_sizes) {
  OpCall call(rnn_op());
  call.args.push_back(&input);
  call.args.push_back(&hx);
  call.args.push_back(&cx);
  for (const Tensor& p : params) call.args.push_back(&p);
  detail::rnn::push_values(call, params.size(), mode, has_biases, num_layers, bidirectional, batch_first, batch_sizes);
  dispatch(call);
  return {std::move(call.outputs[0].result), std::move(call.outputs[1].result), std::move(call.outputs[2].result)};
}

}  // namespace loom
