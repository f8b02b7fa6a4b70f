// samples_rnn.cpp — _rnn (every mode, layers, directions, batch_first,
// packed), _rnn_backward, and the cells.
#include "sample_util.h"

namespace loom::opinfo {
namespace {
using namespace detail;

struct RnnShape {
  const char* label;
  const char* mode;
  int64_t gates, layers, dirs;
  bool bias, batch_first, packed;
};

constexpr int64_t kT = 4, kN = 3, kIn = 5, kH = 6;
const std::vector<int64_t> kBatchSizes{3, 2, 2, 1};  // sums to 8 rows

// input, hx, cx?, params in the sample's tensors; the values after them.
Sample rnn_sample(const SampleContext& c, const RnnShape& s, bool with_grads) {
  const bool lstm = std::string(s.mode) == "LSTM";
  std::vector<std::optional<Tensor>> t;
  const Shape state{s.layers * s.dirs, kN, kH};
  if (with_grads) {
    const int64_t width = s.dirs * kH;
    t.push_back(c.tensor(s.packed ? Shape{8, width} : s.batch_first ? Shape{kN, kT, width} : Shape{kT, kN, width}, -1, 1));
    t.push_back(c.tensor(state, -1, 1));
    t.push_back(lstm ? std::optional<Tensor>(c.tensor(state, -1, 1)) : std::nullopt);
  }
  t.push_back(c.tensor(s.packed ? Shape{8, kIn} : s.batch_first ? Shape{kN, kT, kIn} : Shape{kT, kN, kIn}, -1, 1));
  t.push_back(c.tensor(state, -1, 1));
  t.push_back(lstm ? std::optional<Tensor>(c.tensor(state, -1, 1)) : std::nullopt);
  int64_t count = 0;
  for (int64_t l = 0; l < s.layers; ++l)
    for (int64_t d = 0; d < s.dirs; ++d) {
      t.push_back(c.tensor({s.gates * kH, l == 0 ? kIn : s.dirs * kH}, -0.4, 0.4));
      t.push_back(c.tensor({s.gates * kH, kH}, -0.4, 0.4));
      count += 2;
      if (s.bias) {
        t.push_back(c.tensor({s.gates * kH}, -0.4, 0.4));
        t.push_back(c.tensor({s.gates * kH}, -0.4, 0.4));
        count += 2;
      }
    }
  std::vector<Value> v{Value(TensorCount{count}), S(s.mode), B(s.bias), I(s.layers), B(s.dirs == 2),
                       B(s.batch_first), s.packed ? L(kBatchSizes) : None()};
  return c.call(s.label, std::move(t), std::move(v));
}

const RnnShape kShapes[] = {
    {"LSTM", "LSTM", 4, 1, 1, true, false, false},
    {"LSTM, 2 layers, bidirectional", "LSTM", 4, 2, 2, true, false, false},
    {"LSTM, batch_first, no bias", "LSTM", 4, 1, 1, false, true, false},
    {"LSTM, packed, bidirectional", "LSTM", 4, 1, 2, true, false, true},
    {"GRU, 2 layers", "GRU", 3, 2, 1, true, false, false},
    {"GRU, packed", "GRU", 3, 2, 2, true, false, true},
    {"RNN_TANH, bidirectional", "RNN_TANH", 1, 1, 2, true, false, false},
    {"RNN_RELU, batch_first", "RNN_RELU", 1, 2, 1, true, true, false},
};

Samples rnn_samples(const SampleContext& c, bool with_grads) {
  Samples v;
  for (const RnnShape& s : kShapes) v.push_back(rnn_sample(c, s, with_grads));
  return v;
}

}  // namespace

LOOM_OP_SAMPLES("_rnn", {.accumulates = true, .make = [](const SampleContext& c) { return rnn_samples(c, false); }})
LOOM_OP_SAMPLES("_rnn_backward", {.accumulates = true,
                                  .make = [](const SampleContext& c) { return rnn_samples(c, true); }})

LOOM_OP_SAMPLES("lstm_cell", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return Samples{c.call("biases", {c.tensor({3, 5}), c.tensor({3, 6}), c.tensor({3, 6}), c.tensor({24, 5}, -0.4, 0.4),
                                       c.tensor({24, 6}, -0.4, 0.4), c.tensor({24}), c.tensor({24})}),
                     c.call("no biases", {c.tensor({3, 5}), c.tensor({3, 6}), c.tensor({3, 6}),
                                          c.tensor({24, 5}, -0.4, 0.4), c.tensor({24, 6}, -0.4, 0.4)})};
    }})

namespace {
// gru_cell, rnn_tanh_cell, rnn_relu_cell: G gates.
detail::Samples gate_cell_samples(const SampleContext& c, int64_t G) {
  using namespace detail;
  return {c.call("biases", {c.tensor({3, 5}), c.tensor({3, 6}), c.tensor({G * 6, 5}, -0.4, 0.4),
                            c.tensor({G * 6, 6}, -0.4, 0.4), c.tensor({G * 6}), c.tensor({G * 6})}),
          c.call("no biases, one row", {c.tensor({1, 5}), c.tensor({1, 6}), c.tensor({G * 6, 5}, -0.4, 0.4),
                                        c.tensor({G * 6, 6}, -0.4, 0.4)})};
}
}  // namespace

LOOM_OP_SAMPLES("gru_cell", {.accumulates = true, .make = [](const SampleContext& c) { return gate_cell_samples(c, 3); }})
LOOM_OP_SAMPLES("rnn_tanh_cell", {.accumulates = true,
                                  .make = [](const SampleContext& c) { return gate_cell_samples(c, 1); }})
LOOM_OP_SAMPLES("rnn_relu_cell", {.accumulates = true,
                                  .make = [](const SampleContext& c) { return gate_cell_samples(c, 1); }})

}  // namespace loom::opinfo
