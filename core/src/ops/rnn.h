// rnn.h (core-internal) — what _rnn and _rnn_backward share (ops_rnn.cpp,
// ops_rnn_backward.cpp): the arguments, their checks, and the composite
// forward every device can run.
//
//   _rnn(Tensor input, Tensor hx, Tensor? cx, Tensor[] params, str mode, bool has_biases,
//        int num_layers, bool bidirectional, bool batch_first, int[]? batch_sizes=None)
//     -> (Tensor output, Tensor hy, Tensor cy)
//
// mode is LSTM, GRU, RNN_TANH or RNN_RELU. params holds, per layer and then
// per direction, w_ih [G*H, in], w_hh [G*H, H] and (with biases) b_ih, b_hh
// [G*H], G = 4 (LSTM: gates i, f, g, o), 3 (GRU: r, z, n) or 1; in is the
// input size for layer 0 and D*H above it. input is [T, N, in] ([N, T, in]
// with batch_first), or packed [sum(batch_sizes), in] when batch_sizes (the
// rows of each time step, non-increasing) is given. hx (and cx for LSTM) is
// [L*D, N, H]. output is [T, N, D*H] (batch_first: [N, T, D*H]; packed:
// [sum, D*H]); hy and cy are [L*D, N, H] (cy is [0] but for LSTM). No dropout:
// frontends apply dropout between layers by calling _rnn per layer.
#pragma once

#include <loom/op_call.h>
#include <loom/tensor.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace loom::detail::rnn {

enum class Mode { LSTM, GRU, RnnTanh, RnnRelu };

struct Config {
  Mode mode = Mode::LSTM;
  bool has_biases = true;
  int64_t layers = 1;
  bool bidirectional = false;
  bool batch_first = false;
  bool packed = false;
  std::vector<int64_t> batch_sizes;  // packed only
  // From the tensors:
  int64_t steps = 0, batch = 0, input_size = 0, hidden = 0;

  int64_t directions() const { return bidirectional ? 2 : 1; }
  int64_t gates() const { return mode == Mode::LSTM ? 4 : mode == Mode::GRU ? 3 : 1; }
  int64_t tensors_per_cell() const { return has_biases ? 4 : 2; }
};

// The values of an _rnn / _rnn_backward call from `first` (its TENSOR_LIST
// count) on, and the tensors: checked, with a clear error naming `op` and
// what is wrong. `params` are the call's parameter tensors.
Config parse(const std::string& op, const LoomValue* values, const Tensor& input, const Tensor& hx, const Tensor* cx,
             const std::vector<const Tensor*>& params);

// The forward through loom ops (a matrix product for every step's input
// projection at once, then one cell per step): output, hy, cy. Recorded by
// autograd when grad mode is on, which the backward composite relies on.
std::tuple<Tensor, Tensor, Tensor> forward(const Config& c, const Tensor& input, const Tensor& hx, const Tensor& cx,
                                           const std::vector<Tensor>& params);

// One step of a cell on input rows already projected (x w_ih^T + b_ih) and
// the state (h, c): the new (h, c); c is passed through but for LSTM.
std::pair<Tensor, Tensor> cell_step(Mode mode, const Tensor& x_proj, const Tensor& h, const Tensor& c,
                                    const Tensor& w_hh, const Tensor* b_hh);

// Appends _rnn's non-tensor arguments to call.values (the TENSOR_LIST count
// of `num_params` first); the strings live in `mode` (kept alive by the caller).
void push_values(OpCall& call, size_t num_params, const std::string& mode, bool has_biases, int64_t num_layers,
                 bool bidirectional, bool batch_first, std::optional<IntArrayRef> batch_sizes);

// The output's shape, for the output plans.
DimVector output_shape(const Config& c);

}  // namespace loom::detail::rnn
