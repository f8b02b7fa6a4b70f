// loom/nn/rnn.h — RNN, LSTM, GRU and their cells (torch::nn::LSTM ...):
//
//   loom::nn::LSTM lstm(loom::nn::LSTMOptions(28, 64).num_layers(2).batch_first(true));
//   auto [output, state] = lstm(x);          // state: (h_n, c_n)
//   auto [h_n, c_n] = state;
//   loom::nn::GRU gru(loom::nn::GRUOptions(8, 16));
//   auto [out, h] = gru(x, h0);
//
// The sequence modules run the catalog's fused _rnn op (loom/ops/rnn.h): a
// device's own kernel (cuDNN on cuda, the fused CPU kernel) or the core's
// composite; with dropout in training, layer by layer with dropout between.
// Parameters are PyTorch's (weight_ih_l0, weight_hh_l0_reverse, bias_ih_l1
// ...; U(-1/sqrt(hidden), 1/sqrt(hidden))), so state dicts move between
// them. Inputs are (seq, batch, feature) ((batch, seq, feature) with
// batch_first) or unbatched (seq, feature); forward_with_packed_input takes
// a PackedSequence (loom/nn/utils/rnn.h) and returns one. proj_size is not
// supported yet.
#pragma once

#include <loom/nn/module.h>
#include <loom/nn/utils/rnn.h>

#include <any>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace loom::nn {

// The options every sequence module shares.
#define LOOM_RNN_COMMON_OPTIONS(Options)                                                              \
  Options(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {} \
  LOOM_ARG(int64_t, input_size);                                                                      \
  LOOM_ARG(int64_t, hidden_size);                                                                     \
  LOOM_ARG(int64_t, num_layers) = 1;                                                                  \
  LOOM_ARG(bool, bias) = true;                                                                        \
  LOOM_ARG(bool, batch_first) = false;                                                                \
  /* Dropout on the outputs of every layer but the last, in training. */                              \
  LOOM_ARG(double, dropout) = 0.0;                                                                    \
  LOOM_ARG(bool, bidirectional) = false

struct LSTMOptions {
  LOOM_RNN_COMMON_OPTIONS(LSTMOptions);
  // Must be 0 (projections are not supported yet).
  LOOM_ARG(int64_t, proj_size) = 0;
};
struct GRUOptions {
  LOOM_RNN_COMMON_OPTIONS(GRUOptions);
};
struct RNNOptions {
  LOOM_RNN_COMMON_OPTIONS(RNNOptions);
  // "tanh" or "relu" (loom::kTanh, loom::kReLU).
  LOOM_ARG(std::string, nonlinearity) = "tanh";
};
#undef LOOM_RNN_COMMON_OPTIONS

namespace detail {

// What a sequence module needs from its options, whatever their type.
struct RNNConfig {
  std::string mode;  // _rnn's mode: "LSTM", "GRU", "RNN_TANH", "RNN_RELU"
  int64_t input_size, hidden_size, num_layers;
  bool bias, batch_first, bidirectional;
  double dropout;
};

class RNNImplBase : public Module {
 public:
  // Every parameter in _rnn's order (per layer, per direction: w_ih, w_hh, b_ih, b_hh).
  const std::vector<Tensor>& flat_weights() const { return flat_weights_; }
  // The parameters grouped per layer and direction.
  std::vector<std::vector<Tensor>> all_weights() const;
  // U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every parameter.
  void reset_parameters();
  // PyTorch packs cuDNN's weights here; loom's kernels take them as they are.
  void flatten_parameters() {}
  std::string extra_repr() const override;

 protected:
  RNNImplBase(const char* type_name, RNNConfig config);
  // (output, h_n, c_n) for input and initial states (undefined: zeros; cx
  // only for LSTM), unbatched inputs included.
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, Tensor hx, Tensor cx);
  std::tuple<utils::rnn::PackedSequence, Tensor, Tensor> run_packed(const utils::rnn::PackedSequence& input, Tensor hx,
                                                                   Tensor cx);

 private:
  // The _rnn call(s): all layers in one, or layer by layer with dropout between.
  std::tuple<Tensor, Tensor, Tensor> run_layers(const Tensor& x, const Tensor& hx, const Tensor& cx,
                                                std::optional<IntArrayRef> batch_sizes);
  RNNConfig config_;
  std::vector<Tensor> flat_weights_;
};

}  // namespace detail

class LSTMImpl : public detail::RNNImplBase {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);
  LOOM_CLONE_FROM_OPTIONS(LSTMImpl)
  // (output, (h_n, c_n)); hx = (h_0, c_0), zeros when absent.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
  static std::vector<std::any> forward_default_args() {
    return {std::any(std::optional<std::tuple<Tensor, Tensor>>())};
  }
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
  LSTMOptions options;
};
LOOM_MODULE(LSTM);

class GRUImpl : public detail::RNNImplBase {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);
  LOOM_CLONE_FROM_OPTIONS(GRUImpl)
  // (output, h_n); hx undefined: zeros.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  static std::vector<std::any> forward_default_args() { return {std::any(Tensor())}; }
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(const utils::rnn::PackedSequence& packed_input,
                                                                         Tensor hx = {});
  GRUOptions options;
};
LOOM_MODULE(GRU);

class RNNImpl : public detail::RNNImplBase {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& options);
  LOOM_CLONE_FROM_OPTIONS(RNNImpl)
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  static std::vector<std::any> forward_default_args() { return {std::any(Tensor())}; }
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(const utils::rnn::PackedSequence& packed_input,
                                                                         Tensor hx = {});
  RNNOptions options;
};
LOOM_MODULE(RNN);

// ---- cells ----------------------------------------------------------------------------

struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  LOOM_ARG(int64_t, input_size);
  LOOM_ARG(int64_t, hidden_size);
  LOOM_ARG(bool, bias) = true;
};
using GRUCellOptions = LSTMCellOptions;
struct RNNCellOptions : LSTMCellOptions {
  using LSTMCellOptions::LSTMCellOptions;
  LOOM_ARG(std::string, nonlinearity) = "tanh";
};

namespace detail {
class RNNCellImplBase : public Module {
 public:
  void reset_parameters();
  std::string extra_repr() const override;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  RNNCellImplBase(const char* type_name, const LSTMCellOptions& options, int64_t gates);
  // input (N, in) or (in); the state's zeros for it; whether it was unbatched.
  std::tuple<Tensor, Tensor, bool> prepare(const Tensor& input) const;

 private:
  int64_t input_size_, hidden_size_;
};
}  // namespace detail

class LSTMCellImpl : public detail::RNNCellImplBase {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options) : RNNCellImplBase("LSTMCell", options, 4), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(LSTMCellImpl)
  // (h_1, c_1); hx = (h_0, c_0), zeros when absent.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
  static std::vector<std::any> forward_default_args() {
    return {std::any(std::optional<std::tuple<Tensor, Tensor>>())};
  }
  LSTMCellOptions options;
};
LOOM_MODULE(LSTMCell);

class GRUCellImpl : public detail::RNNCellImplBase {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options) : RNNCellImplBase("GRUCell", options, 3), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(GRUCellImpl)
  Tensor forward(const Tensor& input, Tensor hx = {});
  static std::vector<std::any> forward_default_args() { return {std::any(Tensor())}; }
  GRUCellOptions options;
};
LOOM_MODULE(GRUCell);

class RNNCellImpl : public detail::RNNCellImplBase {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& options);
  LOOM_CLONE_FROM_OPTIONS(RNNCellImpl)
  Tensor forward(const Tensor& input, Tensor hx = {});
  static std::vector<std::any> forward_default_args() { return {std::any(Tensor())}; }
  RNNCellOptions options;
};
LOOM_MODULE(RNNCell);

}  // namespace loom::nn
