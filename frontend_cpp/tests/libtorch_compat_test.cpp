// libtorch_compat_test.cpp — the pieces of libtorch's C++ frontend that real
// programs reach for, spelled as libtorch spells them: the recurrent
// modules, activations with options, F::*FuncOptions, OrderedDict items,
// as<T>(), clone(), AnyModule, Functional with bound arguments, custom
// autograd Functions and L-BFGS. Expected values come from PyTorch 1.13
// (nn_reference_values.py for the layers; the L-BFGS script is quoted at its
// test).
#include "nn_test_util.h"

#include <loom/loom.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace nn = loom::nn;
namespace F = loom::nn::functional;
using loom::Tensor;
using nn_test::check_close;
using nn_test::fill_params;
using nn_test::pattern;

TEST_CASE("libtorch compat: activations with options match PyTorch") {
  const Tensor x = pattern({2, 4}, 140);
  check_close(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))(x),
              {-0.03333334, 1, 0, -0.2, 0.1666667, -0.1666667, 0.3333333, -0.1333333});
  check_close(nn::ELU(nn::ELUOptions().alpha(0.5))(x),
              {-0.07675913, 1, 0, -0.3160603, 0.1666667, -0.2827009, 0.3333333, -0.2432914});
  check_close(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(1))(x),
              {0.2701528, 1, 0.3465736, 0.063464, 0.4368195, 0.086504, 0.5405184, 0.1169813});
  check_close(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.1)),
              {-0.01666667, 1, 0, -0.1, 0.1666667, -0.08333334, 0.3333333, -0.06666667});
  check_close(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(0.5))(x),
              {-0.1666667, 0.5, 0, -0.5, 0.1666667, -0.5, 0.3333333, -0.5});
  check_close(nn::ReLU6()(x * 7.0), {0, 6, 0, 0, 1.166667, 0, 2.333333, 0});
  CHECK_THROWS_WITH(nn::Hardtanh(nn::HardtanhOptions().min_val(1).max_val(0)),
                    Catch::Contains("max_val (0) must be greater than min_val (1)"));
  CHECK_THROWS_WITH(F::hardtanh(x, F::HardtanhFuncOptions().min_val(1).max_val(0)),
                    Catch::Contains("min_val (1) cannot be greater than max_val (0)"));
  // In place, and the gradient: 0 at and beyond the bounds (clamp's passes at them).
  Tensor y = x.clone();
  F::hardtanh(y, F::HardtanhFuncOptions().min_val(-1).max_val(1).inplace(true));
  check_close(y, {-0.1666667, 1, 0, -1, 0.1666667, -0.8333333, 0.3333333, -0.6666667});
  const Tensor leaf = x.clone().requires_grad_();
  F::hardtanh(leaf * 1.0).sum().backward();
  check_close(leaf.grad(), {1, 0, 1, 0, 1, 1, 1, 1});
  check_close(F::log_softmax(x, 1), {-1.762542, -0.595875, -1.595875, -2.595875, -1.09321, -2.09321, -0.9265438,
                                     -1.926544});
  const Tensor target = loom::tensor(std::vector<int64_t>{3, 0});
  check_close(F::nll_loss(F::log_softmax(x, 1), target, F::NLLLossFuncOptions().reduction(loom::kSum)), {3.689085});
  check_close(F::normalize(x, F::NormalizeFuncOptions().p(1).dim(1)),
              {-0.07692309, 0.4615385, 0, -0.4615385, 0.08333334, -0.4166667, 0.1666667, -0.3333333});
  check_close(F::cosine_similarity(x, pattern({2, 4}, 146), F::CosineSimilarityFuncOptions().dim(1)),
              {-0.1725678, -0.1725678});
}

TEST_CASE("libtorch compat: LSTM, GRU and RNN match PyTorch") {
  const Tensor seq = pattern({2, 3, 3}, 141);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).batch_first(true));
  fill_params(*lstm);
  std::vector<std::string> keys;
  for (const auto& item : lstm->named_parameters()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l1",
                                         "weight_hh_l1", "bias_ih_l1", "bias_hh_l1"});
  auto [out, state] = lstm->forward(seq);
  auto [h, c] = state;
  check_close(out, {-0.0158719, -0.01750923, -0.021555, -0.0002956934, -0.05479309, -0.02687298, -0.01887579,
                    0.02137939, -0.04360351, -0.03665542, -0.04222072, 0.01007157, -0.02547259, -0.01357352,
                    -0.01652664, 0.004455596, -0.08125366, -0.01677726, -0.00764234, 0.02982692, -0.07934327,
                    -0.02749735, -0.02794756, 0.01823077});
  check_close(h, {-0.07567536, 0.106911, 0.02761881, 0.1913411, 0.0207321, 0.1123208, 0.0444681, 0.1256871,
                  -0.04360351, -0.03665542, -0.04222072, 0.01007157, -0.07934327, -0.02749735, -0.02794756,
                  0.01823077});
  check_close(c, {-0.2145855, 0.2508333, 0.05618718, 0.3477242, 0.05521065, 0.2456548, 0.09367909, 0.2247095,
                  -0.08056322, -0.06298785, -0.1246098, 0.01580545, -0.143407, -0.04832038, -0.08525976,
                  0.02920681});
  nn_test::check_grads_flow(*lstm, out);

  nn::GRU gru(nn::GRUOptions(3, 2).bidirectional(true));
  fill_params(*gru);
  auto [gout, gh] = gru->forward(seq, pattern({2, 3, 2}, 142));
  check_close(gout, {0.7933456, -0.3623374, 0.247347, -0.4576373, 0.8099005, 0.136535, -0.3564786, 0.08015189,
                     -0.2837684, -0.4374418, 0.1922114, -0.4254754, 0.7892175, -0.3888872, -0.1916081, -0.2742212,
                     0.6698717, 0.2437331, -0.4911865, 0.2374855, 0.09981227, -0.5320476, -0.1045541, -0.1758891});
  check_close(gh, {0.7892175, -0.3888872, 0.6698717, 0.2437331, 0.09981227, -0.5320476, 0.247347, -0.4576373,
                   -0.3564786, 0.08015189, 0.1922114, -0.4254754});

  nn::RNN rnn(nn::RNNOptions(3, 2).nonlinearity(loom::kReLU));
  fill_params(*rnn);
  check_close(std::get<0>(rnn->forward(seq)), {0, 0, 0.8472222, 0, 0, 4.470348e-08, 0.1944444, 0, 0.900463, 0, 0, 0});

  nn::LSTMCell cell(3, 2);
  fill_params(*cell);
  auto [ch, cc] = cell->forward(pattern({2, 3}, 143));
  check_close(ch, {0.0916891, 0.03641934, 0.2151223, -0.1141346});
  check_close(cc, {0.2999451, 0.06778241, 0.3826901, -0.2878985});
  nn::GRUCell gcell(3, 2);
  fill_params(*gcell);
  check_close(gcell->forward(pattern({2, 3}, 143), pattern({2, 2}, 144)),
              {-0.1828257, 0.3694451, 0.2667167, -0.224951});
}

TEST_CASE("libtorch compat: interpolate and one_hot match PyTorch") {
  const Tensor img = pattern({1, 2, 3, 4}, 145);
  const Tensor up = F::interpolate(
      img, F::InterpolateFuncOptions().size(std::vector<int64_t>{5, 6}).mode(loom::kBilinear).align_corners(false));
  CHECK(up.sizes() == std::vector<int64_t>{1, 2, 5, 6});
  check_close(up, {0.1666667,  -0.3333333, -0.6388888,   0.1388889,  -0.1666668, -0.6666667, 0.3,        -0.2,
                   -0.5055555, 0.2722223,  -0.03333345,  -0.5333334, 0.5,        1.986821e-08, -0.3055554, 0.4722223,
                   0.1666666,  -0.3333333, 0.7,          0.2,        -0.1055555, 0.6722223,  0.3666666,  -0.1333333,
                   0.8333333,  0.3333333,  0.02777784,   0.8055556,  0.4999999,  0,          -1,         -0.4166667,
                   -4.553133e-08, -0.6666667, -0.2499998, 0.3333333, -0.8666667, -0.2833333, 0.1333333, -0.5333334,
                   -0.1166665, 0.4666667,  -0.6666667,   -0.08333332, 0.3333333, -0.3333333, 0.08333351, 0.6666667,
                   -0.4666666, 0.1166667,  0.5333333,    -0.1333333, 0.2833335,  0.8666667,  -0.3333333, 0.25,
                   0.6666666,  -4.30478e-08, 0.4166668,  1});
  nn::Upsample upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(loom::kNearest));
  const Tensor nearest = upsample(img);
  CHECK(nearest.sizes() == std::vector<int64_t>{1, 2, 6, 8});
  CHECK(nearest.index({0, 1, 5, 7}).item<float>() == img.index({0, 1, 2, 3}).item<float>());

  const Tensor hot = F::one_hot(loom::tensor(std::vector<int64_t>{2, 0, 1}), 4);
  CHECK(hot.dtype() == loom::kLong);
  CHECK(nn_test::values(hot) == std::vector<double>{0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0});
  CHECK_THROWS_WITH(F::one_hot(loom::tensor(std::vector<int64_t>{5}), 4), Catch::Contains("class"));
}

TEST_CASE("libtorch compat: OrderedDict items, as<T>() and Module::clone") {
  nn::Sequential seq(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2));
  fill_params(*seq);
  for (const auto& item : seq->named_parameters()) {
    CHECK(item.key() == item.first);
    CHECK(item.value().is_same(item.second));
  }
  CHECK(seq->named_parameters()["0.weight"].sizes() == std::vector<int64_t>{4, 3});
  auto* first = seq[0]->as<nn::Linear>();
  REQUIRE(first);
  CHECK(first->options.out_features() == 4);
  CHECK(seq[1]->as<nn::Linear>() == nullptr);

  auto copy = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  REQUIRE(copy);
  const Tensor x = pattern({2, 3}, 7);
  check_close(copy->forward(x), seq->forward(x), 0, 0);
  const auto original = seq->parameters(), cloned = copy->parameters();
  REQUIRE(original.size() == cloned.size());
  for (size_t i = 0; i < original.size(); ++i) CHECK_FALSE(original[i].is_same(cloned[i]));
  {
    loom::NoGradGuard no_grad;
    Tensor first_weight = cloned[0];
    first_weight.fill_(0.25);
  }
  CHECK(original[0].index({0, 0}).item<float>() != 0.25f);

  nn::BatchNorm1d bn(3);
  bn(pattern({4, 3}, 9));
  auto bn_copy = std::dynamic_pointer_cast<nn::BatchNorm1dImpl>(bn->clone());
  REQUIRE(bn_copy);
  check_close(bn_copy->running_mean, bn->running_mean, 0, 0);
  CHECK_FALSE(bn_copy->running_mean.is_same(bn->running_mean));
}

namespace {
struct ScaledImpl : nn::Cloneable<ScaledImpl> {
  explicit ScaledImpl(double scale = 2) : scale(scale) { reset(); }
  void reset() override { weight = register_parameter("weight", loom::ones({2})); }
  Tensor forward(const Tensor& x) { return x * weight * scale; }
  double scale;
  Tensor weight;
};
TORCH_MODULE(Scaled);
}  // namespace

TEST_CASE("libtorch compat: Cloneable, AnyModule and Functional") {
  Scaled s(3.0);
  {
    loom::NoGradGuard no_grad;
    s->weight.fill_(0.5);
  }
  auto copy = std::dynamic_pointer_cast<ScaledImpl>(s->clone());
  REQUIRE(copy);
  CHECK(copy->scale == 3.0);
  CHECK_FALSE(copy->weight.is_same(s->weight));
  CHECK(copy->named_parameters()["weight"].is_same(copy->weight));  // registrations rebuilt
  check_close(copy->weight, {0.5, 0.5}, 0, 0);

  nn::AnyModule any(nn::Linear(2, 3));
  const Tensor x = pattern({4, 2}, 3);
  CHECK(any.forward(x).sizes() == std::vector<int64_t>{4, 3});
  CHECK(any.get<nn::Linear>()->options.in_features() == 2);
  CHECK_THROWS_WITH(any.forward(x, x), Catch::Contains("takes 1"));
  nn::AnyModule lstm_any(nn::LSTM(2, 3));
  auto [out, state] = lstm_any.forward<std::tuple<Tensor, std::tuple<Tensor, Tensor>>>(x.unsqueeze(1));
  CHECK(out.sizes() == std::vector<int64_t>{4, 1, 3});
  CHECK_THROWS_WITH(lstm_any.forward(x.unsqueeze(1)), Catch::Contains("not the"));
  using LSTMResult = std::tuple<Tensor, std::tuple<Tensor, Tensor>>;
  CHECK_THROWS_WITH(lstm_any.forward<LSTMResult>(x, x, x), Catch::Contains("takes 1 to 2 arguments, got 3"));

  nn::Sequential seq;
  seq->push_back(nn::Functional(loom::leaky_relu, 0.5));
  seq->push_back(any);
  seq->push_back(nn::Functional([](const Tensor& t) { return t * 2; }));
  CHECK(seq->forward(x).sizes() == std::vector<int64_t>{4, 3});
  check_close(nn::Functional(loom::leaky_relu, 0.5)(loom::tensor(std::vector<float>{-2, 2})), {-1, 2}, 0, 0);
}

namespace {
// y = x * w with the gradient of PyTorch's custom-Function tutorial, plus a
// saved scalar and a non-differentiable second output.
struct MulConstant : loom::autograd::Function<MulConstant> {
  static loom::autograd::variable_list forward(loom::autograd::AutogradContext* ctx, Tensor x, double w) {
    ctx->saved_data["w"] = w;
    Tensor mask = x > 0;
    ctx->mark_non_differentiable({mask});
    return {x * w, mask};
  }
  static loom::autograd::variable_list backward(loom::autograd::AutogradContext* ctx,
                                                loom::autograd::variable_list grads) {
    return {grads[0] * ctx->saved_data["w"].toDouble(), Tensor()};
  }
};
struct LinearFunction : loom::autograd::Function<LinearFunction> {
  static Tensor forward(loom::autograd::AutogradContext* ctx, Tensor input, Tensor weight) {
    ctx->save_for_backward({input, weight});
    return input.mm(weight.t());
  }
  static loom::autograd::tensor_list backward(loom::autograd::AutogradContext* ctx,
                                              loom::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    return {grads[0].mm(saved[1]), grads[0].t().mm(saved[0])};
  }
};
}  // namespace

TEST_CASE("libtorch compat: autograd::Function") {
  Tensor x = pattern({2, 3}, 1).requires_grad_();
  auto outs = MulConstant::apply(x, 5.5);
  CHECK(outs[0].requires_grad());
  CHECK_FALSE(outs[1].requires_grad());
  CHECK(outs[0].grad_fn()->name() == "MulConstantBackward");
  outs[0].sum().backward();
  check_close(x.grad(), std::vector<double>(6, 5.5));

  Tensor in = pattern({2, 3}, 2).requires_grad_(), w = pattern({4, 3}, 3).requires_grad_();
  Tensor y = LinearFunction::apply(in, w);
  (y * y).sum().backward();
  Tensor in2 = in.detach().requires_grad_(), w2 = w.detach().requires_grad_();
  Tensor y2 = in2.mm(w2.t());
  (y2 * y2).sum().backward();
  check_close(in.grad(), in2.grad());
  check_close(w.grad(), w2.grad());
}

// The expected values are PyTorch 1.13's, from
//   w = torch.tensor([-1.5, 2.0], requires_grad=True)
//   opt = torch.optim.LBFGS([w], **options)
//   closure: loss = (1 - w[0])**2 + 100 * (w[1] - w[0]**2)**2; backward
//   three opt.step(closure) calls, recording the returned losses.
TEST_CASE("libtorch compat: LBFGS follows PyTorch's trajectory on Rosenbrock") {
  struct Case {
    loom::optim::LBFGSOptions options;
    std::vector<double> w, losses;
  };
  using loom::optim::LBFGSOptions;
  const std::vector<Case> cases = {
      {LBFGSOptions(1).max_iter(5).line_search_fn("strong_wolfe"), {-0.741185069, 0.512356222},
       {12.5, 5.85190201, 5.20500612}},
      {LBFGSOptions(0.001).max_iter(4), {-1.49844682, 2.00052571}, {12.5, 12.3340378, 12.2847347}},
      {LBFGSOptions(1).max_iter(6).history_size(2).line_search_fn("strong_wolfe"), {-0.23358807, 0.00250667334},
       {12.5, 5.82980442, 3.27780819}},
  };
  for (const Case& c : cases) {
    Tensor w = loom::tensor(std::vector<float>{-1.5f, 2.0f}).requires_grad_();
    loom::optim::LBFGS opt({w}, c.options);
    auto closure = [&] {
      opt.zero_grad();
      Tensor loss = (1 - w[0]).pow(2) + 100 * (w[1] - w[0].pow(2)).pow(2);
      loss.backward();
      return loss;
    };
    std::vector<double> losses;
    for (int i = 0; i < 3; ++i) losses.push_back(opt.step(closure).item<double>());
    check_close(w, c.w, 1e-4, 1e-4);
    check_close(loom::tensor(losses), c.losses, 1e-4, 1e-4);
  }
  Tensor w = loom::zeros({2}).requires_grad_();
  loom::optim::LBFGS opt({w});
  CHECK_THROWS_WITH(opt.step(), Catch::Contains("closure"));
}

TEST_CASE("libtorch compat: packed sequences through LSTM and GRU match PyTorch") {
  namespace rnn_utils = loom::nn::utils::rnn;
  const Tensor padded = pattern({3, 4, 3}, 147);  // batch_first; lengths 2, 4, 3
  const Tensor lengths = loom::tensor(std::vector<int64_t>{2, 4, 3});
  const auto packed = rnn_utils::pack_padded_sequence(padded, lengths, /*batch_first=*/true, /*enforce_sorted=*/false);
  CHECK(nn_test::values(packed.batch_sizes()) == std::vector<double>{3, 3, 2, 1});
  CHECK(nn_test::values(packed.sorted_indices()) == std::vector<double>{1, 2, 0});
  check_close(packed.data(), {0, -1, 0.1666667, 1, 0, -1, -1, 0.1666667, -0.8333333, -0.8333333, 0.3333333,
                              -0.6666667, 0.1666667, -0.8333333, 0.3333333, 0.3333333, -0.6666667, 0.5, 0.5, -0.5,
                              0.6666667, -0.6666667, 0.5, -0.5, -0.3333333, 0.8333333, -0.1666667});

  nn::LSTM lstm(nn::LSTMOptions(3, 2).num_layers(2).bidirectional(true).batch_first(true));
  fill_params(*lstm);
  auto [out, state] = lstm->forward_with_packed_input(packed);
  auto [unpacked, out_lengths] = rnn_utils::pad_packed_sequence(out, /*batch_first=*/true, /*padding_value=*/-1.0);
  CHECK(nn_test::values(out_lengths) == std::vector<double>{2, 4, 3});
  check_close(unpacked, {0.1413037,   -0.07979149, 0.1211614,  -0.1224323,  0.2546966,  -0.07532363, 0.1203666,
                         -0.0806546,  -1,          -1,         -1,          -1,         -1,          -1,
                         -1,          -1,          0.1753568,  -0.05122851, 0.1597465,  -0.1234027,  0.2431954,
                         -0.08312184, 0.1358522,   -0.1342416, 0.3078564,   -0.067352,  0.1500498,   -0.1178884,
                         0.3064417,   -0.0947817,  0.08670607, -0.1011194,  0.1643479,  -0.06489228, 0.1541934,
                         -0.1244393,  0.2651665,   -0.06599834, 0.1459126,  -0.1145656, 0.2829627,   -0.09604072,
                         0.08305231,  -0.09901982, -1,         -1,          -1,         -1});
  check_close(std::get<0>(state),
              {0.3008765, -0.09082592, 0.2836451, -0.0290907, 0.2339867, -0.01477427, 0.2906551, 0.01247055, 0.443715,
               -0.07500487, 0.3323267, -0.08668514, 0.2546966, -0.07532363, 0.3064417, -0.0947817, 0.2829627,
               -0.09604072, 0.1211614, -0.1224323, 0.1597465, -0.1234027, 0.1541934, -0.1244393});
  nn_test::check_grads_flow(*lstm, out.data());

  nn::GRU gru(3, 2);
  fill_params(*gru);
  auto [gout, gh] = gru->forward_with_packed_input(packed, pattern({1, 3, 2}, 148));
  check_close(gh, {0.1945045, -0.2908474, 0.4139317, -0.0498243, 0.3642246, 0.04688813});

  // pack_sequence / pad_sequence round trip, and the errors name what was wrong.
  const std::vector<Tensor> seqs{pattern({3, 2}, 1), pattern({1, 2}, 2)};
  auto [back, back_lengths] = rnn_utils::pad_packed_sequence(rnn_utils::pack_sequence(seqs));
  check_close(back, rnn_utils::pad_sequence(seqs), 0, 0);
  CHECK_THROWS_WITH(rnn_utils::pack_padded_sequence(padded, lengths, true, true), Catch::Contains("decreasing"));
  CHECK_THROWS_WITH(rnn_utils::pack_padded_sequence(padded, loom::tensor(std::vector<int64_t>{4, 3}), true),
                    Catch::Contains("2 lengths for a batch of 3"));
  CHECK_THROWS_WITH(lstm->forward_with_packed_input(rnn_utils::pack_sequence({pattern({2, 5}, 1)})),
                    Catch::Contains("input_size = 3"));
}
