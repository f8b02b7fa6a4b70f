// rnn.cpp — RNN, LSTM, GRU and their cells (loom/nn/rnn.h) over the core's
// _rnn op and cell ops. The Python modules (nn/modules/rnn.py) follow the
// same rules: PyTorch's parameter names, order and initialisation.
#include <loom/nn/functional.h>
#include <loom/nn/init.h>
#include <loom/nn/rnn.h>
#include <loom/ops.h>

#include <cmath>

namespace loom::nn {
namespace detail {
namespace {

int64_t gates_of(const std::string& mode) { return mode == "LSTM" ? 4 : mode == "GRU" ? 3 : 1; }

void check_config(const char* type_name, const RNNConfig& c) {
  LOOM_CHECK(c.input_size > 0, type_name, ": input_size must be positive, got ", c.input_size);
  LOOM_CHECK(c.hidden_size > 0, type_name, ": hidden_size must be positive, got ", c.hidden_size);
  LOOM_CHECK(c.num_layers > 0, type_name, ": num_layers must be positive, got ", c.num_layers);
  LOOM_CHECK(c.dropout >= 0 && c.dropout <= 1, type_name,
             ": dropout should be a number in range [0, 1] representing the probability of an element being zeroed, got ",
             c.dropout);
}

template <class Options>
RNNConfig config_of(std::string mode, const Options& o) {
  return {std::move(mode), o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(),
          o.bidirectional(), o.dropout()};
}

std::string rnn_mode(const RNNOptions& o) {
  LOOM_CHECK(o.nonlinearity() == "tanh" || o.nonlinearity() == "relu", "RNN: Unknown nonlinearity '", o.nonlinearity(),
             "'. Select from 'tanh' or 'relu'.");
  return o.nonlinearity() == "tanh" ? "RNN_TANH" : "RNN_RELU";
}

}  // namespace

RNNImplBase::RNNImplBase(const char* type_name, RNNConfig config) : Module(type_name), config_(std::move(config)) {
  check_config(type_name, config_);
  const int64_t gate_size = gates_of(config_.mode) * config_.hidden_size;
  const int64_t directions = config_.bidirectional ? 2 : 1;
  for (int64_t layer = 0; layer < config_.num_layers; ++layer) {
    for (int64_t d = 0; d < directions; ++d) {
      const int64_t layer_input = layer == 0 ? config_.input_size : config_.hidden_size * directions;
      const std::string suffix = "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      flat_weights_.push_back(register_parameter("weight_ih" + suffix, empty({gate_size, layer_input})));
      flat_weights_.push_back(register_parameter("weight_hh" + suffix, empty({gate_size, config_.hidden_size})));
      if (config_.bias) {
        flat_weights_.push_back(register_parameter("bias_ih" + suffix, empty({gate_size})));
        flat_weights_.push_back(register_parameter("bias_hh" + suffix, empty({gate_size})));
      }
    }
  }
  reset_parameters();
}

std::vector<std::vector<Tensor>> RNNImplBase::all_weights() const {
  const size_t per = config_.bias ? 4 : 2;
  std::vector<std::vector<Tensor>> out;
  for (size_t i = 0; i < flat_weights_.size(); i += per)
    out.emplace_back(flat_weights_.begin() + static_cast<std::ptrdiff_t>(i),
                     flat_weights_.begin() + static_cast<std::ptrdiff_t>(i + per));
  return out;
}

void RNNImplBase::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(static_cast<double>(config_.hidden_size));
  for (Tensor& w : parameters()) init::uniform_(w, -stdv, stdv);
}

std::string RNNImplBase::extra_repr() const {
  std::string s = loom::detail::cat("input_size=", config_.input_size, ", hidden_size=", config_.hidden_size,
                                    ", num_layers=", config_.num_layers, ", bias=", config_.bias ? "true" : "false",
                                    ", batch_first=", config_.batch_first ? "true" : "false");
  if (config_.dropout > 0) s += loom::detail::cat(", dropout=", config_.dropout);
  s += config_.bidirectional ? ", bidirectional=true" : ", bidirectional=false";
  return s;
}

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run(const Tensor& input, Tensor hx, Tensor cx) {
  LOOM_CHECK(input.dim() == 2 || input.dim() == 3, name(), ": Expected input to be 2D (unbatched) or 3D, got ",
             input.dim(), "D input ", shape_str(input.sizes()));
  const bool unbatched = input.dim() == 2;
  const bool batch_first = config_.batch_first;
  const Tensor x = unbatched ? input.unsqueeze(batch_first ? 0 : 1) : input;
  LOOM_CHECK(x.size(2) == config_.input_size, name(), ": input.size(-1) must be equal to input_size. Expected ",
             config_.input_size, ", got ", x.size(2));
  const int64_t batch = x.size(batch_first ? 0 : 1);
  const int64_t directions = config_.bidirectional ? 2 : 1;
  const DimVector state_shape{directions * config_.num_layers, batch, config_.hidden_size};
  const bool lstm = config_.mode == "LSTM";
  auto prepare_state = [&](Tensor s, const char* what) {
    if (!s.defined()) return zeros(state_shape, x.dtype(), x.device());
    if (unbatched) s = s.unsqueeze(1);
    LOOM_CHECK(s.sizes() == state_shape, name(), ": Expected hidden size ", shape_str(state_shape), ", got ",
               shape_str(s.sizes()), " (for ", what, ")");
    return s;
  };
  hx = prepare_state(hx, "h_0");
  if (lstm) cx = prepare_state(cx, "c_0");

  auto [output, hy, cy] = run_layers(x, hx, cx, std::nullopt);
  if (unbatched) {
    output = output.squeeze(batch_first ? 0 : 1);
    hy = hy.squeeze(1);
    if (lstm) cy = cy.squeeze(1);
  }
  return {output, hy, cy};
}

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run_layers(const Tensor& x, const Tensor& hx, const Tensor& cx,
                                                           std::optional<IntArrayRef> batch_sizes) {
  const int64_t directions = config_.bidirectional ? 2 : 1;
  const bool lstm = config_.mode == "LSTM";
  const bool batch_first = config_.batch_first && !batch_sizes;  // packed rows have no batch dim
  if (!(config_.dropout > 0 && is_training() && config_.num_layers > 1))
    return _rnn(x, hx, cx, flat_weights_, config_.mode, config_.bias, config_.num_layers, config_.bidirectional,
                batch_first, batch_sizes);
  // Layer by layer, with dropout on each layer's output but the last's.
  const size_t per = (config_.bias ? 4 : 2) * static_cast<size_t>(directions);
  std::vector<Tensor> hys, cys;
  Tensor output = x;
  for (int64_t layer = 0; layer < config_.num_layers; ++layer) {
    const std::vector<Tensor> params(flat_weights_.begin() + static_cast<std::ptrdiff_t>(layer * per),
                                     flat_weights_.begin() + static_cast<std::ptrdiff_t>((layer + 1) * per));
    Tensor h, c;
    std::tie(output, h, c) = _rnn(output, hx.narrow(0, layer * directions, directions),
                                  lstm ? cx.narrow(0, layer * directions, directions) : Tensor(), params,
                                  config_.mode, config_.bias, 1, config_.bidirectional, batch_first, batch_sizes);
    if (layer + 1 < config_.num_layers) output = dropout(output, config_.dropout, true);
    hys.push_back(h);
    cys.push_back(c);
  }
  return {output, cat(hys, 0), lstm ? cat(cys, 0) : cys[0]};
}

std::tuple<utils::rnn::PackedSequence, Tensor, Tensor> RNNImplBase::run_packed(
    const utils::rnn::PackedSequence& input, Tensor hx, Tensor cx) {
  const Tensor& data = input.data();
  LOOM_CHECK(data.dim() == 2 && data.size(1) == config_.input_size, name(),
             ": packed input data must be [rows, input_size = ", config_.input_size, "], got ",
             shape_str(data.sizes()));
  const std::vector<int64_t> batch_sizes = input.batch_sizes().to_vector<int64_t>();
  LOOM_CHECK(!batch_sizes.empty(), name(), ": the packed sequence has no steps");
  const int64_t directions = config_.bidirectional ? 2 : 1;
  const DimVector state_shape{directions * config_.num_layers, batch_sizes[0], config_.hidden_size};
  const bool lstm = config_.mode == "LSTM";
  // States come in the caller's batch order; the packed rows are sorted by length.
  auto prepare_state = [&](Tensor s, const char* what) {
    if (!s.defined()) return zeros(state_shape, data.dtype(), data.device());
    LOOM_CHECK(s.sizes() == state_shape, name(), ": Expected hidden size ", shape_str(state_shape), ", got ",
               shape_str(s.sizes()), " (for ", what, ")");
    return input.sorted_indices().defined() ? s.index_select(1, input.sorted_indices()) : s;
  };
  hx = prepare_state(hx, "h_0");
  if (lstm) cx = prepare_state(cx, "c_0");
  auto [out, hy, cy] = run_layers(data, hx, cx, IntArrayRef(batch_sizes));
  if (input.unsorted_indices().defined()) {
    hy = hy.index_select(1, input.unsorted_indices());
    if (lstm) cy = cy.index_select(1, input.unsorted_indices());
  }
  return {utils::rnn::PackedSequence(out, input.batch_sizes(), input.sorted_indices(), input.unsorted_indices()), hy,
          cy};
}

RNNCellImplBase::RNNCellImplBase(const char* type_name, const LSTMCellOptions& o, int64_t gates)
    : Module(type_name), input_size_(o.input_size()), hidden_size_(o.hidden_size()) {
  LOOM_CHECK(input_size_ > 0 && hidden_size_ > 0, type_name, ": input_size and hidden_size must be positive, got ",
             input_size_, " and ", hidden_size_);
  weight_ih = register_parameter("weight_ih", empty({gates * hidden_size_, input_size_}));
  weight_hh = register_parameter("weight_hh", empty({gates * hidden_size_, hidden_size_}));
  if (o.bias()) {
    bias_ih = register_parameter("bias_ih", empty({gates * hidden_size_}));
    bias_hh = register_parameter("bias_hh", empty({gates * hidden_size_}));
  }
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(static_cast<double>(hidden_size_));
  for (Tensor& w : parameters()) init::uniform_(w, -stdv, stdv);
}

std::string RNNCellImplBase::extra_repr() const {
  return loom::detail::cat(input_size_, ", ", hidden_size_, bias_ih.defined() ? "" : ", bias=false");
}

std::tuple<Tensor, Tensor, bool> RNNCellImplBase::prepare(const Tensor& input) const {
  LOOM_CHECK(input.dim() == 1 || input.dim() == 2, name(), ": Expected input to be 1D or 2D, got ", input.dim(),
             "D instead");
  const bool unbatched = input.dim() == 1;
  const Tensor x = unbatched ? input.unsqueeze(0) : input;
  LOOM_CHECK(x.size(1) == input_size_, name(), ": input has inconsistent input_size: got ", x.size(1), " expected ",
             input_size_);
  return {x, zeros({x.size(0), hidden_size_}, x.dtype(), x.device()), unbatched};
}

}  // namespace detail

LSTMImpl::LSTMImpl(const LSTMOptions& options_)
    : RNNImplBase("LSTM", detail::config_of("LSTM", options_)), options(options_) {
  LOOM_CHECK(options.proj_size() == 0, "LSTM: proj_size is not supported yet (got ", options.proj_size(), ")");
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 std::optional<std::tuple<Tensor, Tensor>> hx) {
  auto [h0, c0] = hx.value_or(std::tuple<Tensor, Tensor>{});
  auto [out, hy, cy] = run(input, h0, c0);
  return {out, {hy, cy}};
}

std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> LSTMImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, std::optional<std::tuple<Tensor, Tensor>> hx) {
  auto [h0, c0] = hx.value_or(std::tuple<Tensor, Tensor>{});
  auto [out, hy, cy] = run_packed(packed_input, h0, c0);
  return {out, {hy, cy}};
}

GRUImpl::GRUImpl(const GRUOptions& options_) : RNNImplBase("GRU", detail::config_of("GRU", options_)), options(options_) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  auto [out, hy, cy] = run(input, std::move(hx), Tensor());
  return {out, hy};
}

std::tuple<utils::rnn::PackedSequence, Tensor> GRUImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, Tensor hx) {
  auto [out, hy, cy] = run_packed(packed_input, std::move(hx), Tensor());
  return {out, hy};
}

RNNImpl::RNNImpl(const RNNOptions& options_)
    : RNNImplBase("RNN", detail::config_of(detail::rnn_mode(options_), options_)), options(options_) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  auto [out, hy, cy] = run(input, std::move(hx), Tensor());
  return {out, hy};
}

std::tuple<utils::rnn::PackedSequence, Tensor> RNNImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, Tensor hx) {
  auto [out, hy, cy] = run_packed(packed_input, std::move(hx), Tensor());
  return {out, hy};
}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx) {
  auto [x, zero, unbatched] = prepare(input);
  Tensor h = zero, c = zero;
  if (hx) {
    std::tie(h, c) = *hx;
    if (unbatched) h = h.unsqueeze(0), c = c.unsqueeze(0);
  }
  auto [hy, cy] = lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh);
  if (unbatched) return {hy.squeeze(0), cy.squeeze(0)};
  return {hy, cy};
}

Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
  auto [x, zero, unbatched] = prepare(input);
  const Tensor h = !hx.defined() ? zero : unbatched ? hx.unsqueeze(0) : hx;
  const Tensor out = gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return unbatched ? out.squeeze(0) : out;
}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& options_) : RNNCellImplBase("RNNCell", options_, 1), options(options_) {
  LOOM_CHECK(options.nonlinearity() == "tanh" || options.nonlinearity() == "relu", "RNNCell: Unknown nonlinearity '",
             options.nonlinearity(), "'. Select from 'tanh' or 'relu'.");
}

Tensor RNNCellImpl::forward(const Tensor& input, Tensor hx) {
  auto [x, zero, unbatched] = prepare(input);
  const Tensor h = !hx.defined() ? zero : unbatched ? hx.unsqueeze(0) : hx;
  const Tensor out = options.nonlinearity() == "tanh" ? rnn_tanh_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)
                                                      : rnn_relu_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return unbatched ? out.squeeze(0) : out;
}

}  // namespace loom::nn
