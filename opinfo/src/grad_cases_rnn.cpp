// grad_cases_rnn.cpp — gradcheck cases for _rnn (every mode, layers,
// both directions, batch_first, packed), its backward op and the cells.
#include <loom/opinfo.h>

using loom::Tensor;
using namespace loom::opinfo;

namespace {

// Parameters of an RNN of `mode` (G gates) as float64 leaves.
Args rnn_params(int64_t G, int64_t in, int64_t H, int64_t layers, int64_t dirs, bool bias) {
  Args p;
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t d = 0; d < dirs; ++d) {
      p.push_back(arg({G * H, l == 0 ? in : dirs * H}, -0.5, 0.5));
      p.push_back(arg({G * H, H}, -0.5, 0.5));
      if (bias) {
        p.push_back(arg({G * H}, -0.5, 0.5));
        p.push_back(arg({G * H}, -0.5, 0.5));
      }
    }
  return p;
}

struct Shape {
  const char* mode;
  int64_t gates, layers, dirs;
  bool bias, batch_first, packed;
};

// x, h0, (c0,) params...; the function returns output, hy (and cy).
GradCase rnn_case(std::string label, Shape s) {
  const int64_t T = 3, N = 2, in = 3, H = 2;
  const bool lstm = std::string(s.mode) == "LSTM";
  Args inputs;
  static const std::vector<int64_t> batch_sizes{2, 2, 1};
  if (s.packed) inputs.push_back(arg({5, in}));
  else inputs.push_back(s.batch_first ? arg({N, T, in}) : arg({T, N, in}));
  inputs.push_back(arg({s.layers * s.dirs, N, H}));
  if (lstm) inputs.push_back(arg({s.layers * s.dirs, N, H}));
  const Args p = rnn_params(s.gates, in, H, s.layers, s.dirs, s.bias);
  inputs.insert(inputs.end(), p.begin(), p.end());
  const size_t first = lstm ? 3 : 2;
  return GradCase{std::move(label), inputs, [s, lstm, first](const Args& x) {
                    const Args params(x.begin() + static_cast<std::ptrdiff_t>(first), x.end());
                    auto [o, h, c] = loom::_rnn(x[0], x[1], lstm ? x[2] : Tensor(), params, s.mode, s.bias, s.layers,
                                                s.dirs == 2, s.batch_first,
                                                s.packed ? std::optional<loom::IntArrayRef>(batch_sizes) : std::nullopt);
                    std::vector<Tensor> r{o, h};
                    if (lstm) r.push_back(c);
                    return r;
                  }};
}

}  // namespace

LOOM_GRAD_CASES("_rnn", [] {
  return std::vector<GradCase>{
      rnn_case("LSTM, 1 layer", {"LSTM", 4, 1, 1, true, false, false}),
      rnn_case("LSTM, 2 layers, bidirectional, batch_first", {"LSTM", 4, 2, 2, true, true, false}),
      rnn_case("LSTM, packed, bidirectional", {"LSTM", 4, 1, 2, true, false, true}),
      rnn_case("GRU, 2 layers, no bias", {"GRU", 3, 2, 1, false, false, false}),
      rnn_case("GRU, packed", {"GRU", 3, 1, 1, true, false, true}),
      rnn_case("RNN_TANH, bidirectional", {"RNN_TANH", 1, 1, 2, true, false, false}),
      rnn_case("RNN_RELU", {"RNN_RELU", 1, 1, 1, true, true, false})};
})

// The backward op itself (what double backward differentiates).
LOOM_GRAD_CASES("_rnn_backward", [] {
  const Args p = rnn_params(4, 3, 2, 1, 1, true);
  Args inputs{arg({3, 2, 2}), arg({1, 2, 2}), arg({3, 2, 3}), arg({1, 2, 2}), arg({1, 2, 2})};
  inputs.insert(inputs.end(), p.begin(), p.end());
  return std::vector<GradCase>{
      {"LSTM: grad_output, grad_hy, input, hx, cx and weights differentiated", inputs, [](const Args& x) {
         const Args params(x.begin() + 5, x.end());
         auto [gi, ghx, gcx, gp] = loom::_rnn_backward(x[0], x[1], Tensor(), x[2], x[3], x[4], params, "LSTM", true, 1,
                                                       false, false);
         return std::vector<Tensor>{gi, ghx, gcx, gp};
       }, false}};  // gradgradcheck would differentiate the recomputed forward a third time: slow, and
                    // gradcheck of this op already covers _rnn's double backward
})

LOOM_GRAD_CASES("lstm_cell", [] {
  return std::vector<GradCase>{
      {"biases", {arg({2, 3}), arg({2, 4}), arg({2, 4}), arg({16, 3}), arg({16, 4}), arg({16}), arg({16})},
       [](const Args& x) {
         auto [h, c] = loom::lstm_cell(x[0], x[1], x[2], x[3], x[4], x[5], x[6]);
         return std::vector<Tensor>{h, c};
       }},
      {"no biases", {arg({2, 3}), arg({2, 4}), arg({2, 4}), arg({16, 3}), arg({16, 4})}, [](const Args& x) {
         auto [h, c] = loom::lstm_cell(x[0], x[1], x[2], x[3], x[4]);
         return std::vector<Tensor>{h, c};
       }}};
})
LOOM_GRAD_CASES("gru_cell", [] {
  return std::vector<GradCase>{{"biases", {arg({2, 3}), arg({2, 4}), arg({12, 3}), arg({12, 4}), arg({12}), arg({12})},
                                [](const Args& x) { return out(loom::gru_cell(x[0], x[1], x[2], x[3], x[4], x[5])); }}};
})
LOOM_GRAD_CASES("rnn_tanh_cell", [] {
  return std::vector<GradCase>{{"no biases", {arg({2, 3}), arg({2, 4}), arg({4, 3}), arg({4, 4})},
                                [](const Args& x) { return out(loom::rnn_tanh_cell(x[0], x[1], x[2], x[3])); }}};
})
LOOM_GRAD_CASES("rnn_relu_cell", [] {
  return std::vector<GradCase>{{"biases", {arg({2, 3}), arg({2, 4}), arg({4, 3}), arg({4, 4}), arg({4}), arg({4})},
                                [](const Args& x) { return out(loom::rnn_relu_cell(x[0], x[1], x[2], x[3], x[4], x[5])); }}};
})
