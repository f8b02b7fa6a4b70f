// loom/ops/rnn.h — the op catalog, part: recurrent networks. Included by
// loom/ops.h; defined in core/src/ops/ops_rnn.cpp and ops_rnn_backward.cpp.
#pragma once

#include <loom/tensor.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace loom {

// A whole multi-layer, optionally bidirectional RNN over a sequence, as
// torch's fused RNN ops: mode "LSTM", "GRU", "RNN_TANH" or "RNN_RELU".
// params: per layer, per direction, w_ih [G*H, in], w_hh [G*H, H] and (with
// has_biases) b_ih, b_hh [G*H] (G = 4 LSTM, 3 GRU, 1 RNN). input [T, N, in]
// ([N, T, in] with batch_first), or packed [sum(batch_sizes), in] with
// batch_sizes. hx (and cx, LSTM only; else pass an undefined tensor) are
// [num_layers * directions, N, H]. Returns (output [T, N, D*H] (or the input's
// layout), hy, cy ([0] but for LSTM)). No dropout between layers: call it per
// layer with dropout in between. A device may fuse it; every device runs it.
std::tuple<Tensor, Tensor, Tensor> _rnn(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                        const std::vector<Tensor>& params, const std::string& mode, bool has_biases,
                                        int64_t num_layers, bool bidirectional, bool batch_first,
                                        std::optional<IntArrayRef> batch_sizes = std::nullopt);

// _rnn's derivative: (grad_input, grad_hx, grad_cx ([0] but for LSTM),
// grad_params: every parameter's gradient flattened and concatenated in
// params' order). grad_hy / grad_cy may be undefined (no gradient arrived).
std::tuple<Tensor, Tensor, Tensor, Tensor> _rnn_backward(
    const Tensor& grad_output, const Tensor& grad_hy, const Tensor& grad_cy, const Tensor& input, const Tensor& hx,
    const Tensor& cx, const std::vector<Tensor>& params, const std::string& mode, bool has_biases, int64_t num_layers,
    bool bidirectional, bool batch_first, std::optional<IntArrayRef> batch_sizes = std::nullopt);

// One step: input [N, in], states [N, H]; biases optional (undefined).
std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                                    const Tensor& w_hh, const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih = {},
                const Tensor& b_hh = {});
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});

}  // namespace loom
