// nn_layers_test.cpp — each layer's forward against PyTorch values for fixed
// weights and inputs (nn_reference_values.py prints them), gradients to
// every parameter, and train/eval behaviour.
#include "nn_test_util.h"

#include <loom/loom.h>

#include <catch2/catch.hpp>

namespace nn = loom::nn;
using loom::Tensor;
using nn_test::check_close;
using nn_test::pattern;

namespace {
// fill_params, forward, compare, then check that gradients reach every parameter.
template <class Holder, class... Inputs>
void check_layer(Holder m, const std::vector<double>& expected, std::vector<int64_t> shape,
                 const Inputs&... inputs) {
  nn_test::fill_params(*m);
  Tensor out = m(inputs...);
  CHECK(out.shape() == shape);
  check_close(out, expected);
  if (!m->parameters().empty()) nn_test::check_grads_flow(*m, m(inputs...));
}
}  // namespace

TEST_CASE("nn: Linear and Bilinear match PyTorch") {
  const Tensor x = pattern({2, 3}, 100);
  check_layer(nn::Linear(3, 2), {0.3611111, -0.04166672, -0.7777779, 0.9444444}, {2, 2}, x);
  check_layer(nn::Bilinear(3, 2, 2), {-0.3587963, 0.6273148, -0.4722223, 0.7222222}, {2, 2}, x,
              pattern({2, 2}, 101));
  CHECK_THROWS_WITH(nn::Linear(3, 2)(pattern({2, 4}, 0)), Catch::Contains("expected input with last dim 3"));
}

TEST_CASE("nn: convolutions match PyTorch") {
  check_layer(nn::Conv1d(nn::Conv1dOptions(2, 3, 2).padding(1)),
              {0.05555556, -0.7222223, 0.5138889, -0.7777779, 0.09722222, 0.8055556, -0.1388889,
               1.152778, -0.08333336, 0.5694444, -0.25, -0.2777778, -0.1944444, -0.2916667, -0.04166667},
              {1, 3, 5}, pattern({1, 2, 4}, 102));
  check_layer(nn::Conv2d(nn::Conv2dOptions(2, 2, 3).stride(2).padding(1)),
              {-0.3055555, -0.1666666, 0.2083333, 0.2361112, 0.01388881, 0.2361111, -0.4027778,
               0.5416666, -0.9166668, 1.111111, 1.527778, 0.2361111, 1.013889, 0.138889, 0.0138889,
               0.3888889, 0.4861111, 0.4722222},
              {1, 2, 3, 3}, pattern({1, 2, 5, 5}, 103));
  check_layer(nn::Conv2d(nn::Conv2dOptions(4, 2, {1, 2}).groups(2).bias(false)),
              {0.7222222, -0.5694445, -0.625, 0.06944445, -0.5694444, 0.7222222, 0.7777778, -0.4583334},
              {1, 2, 2, 2}, pattern({1, 4, 2, 3}, 104));
  check_layer(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(2, 3, 3).stride(2).padding(1).output_padding(1)),
              {-0.08333334, 0.1805555, -0.7083334, 0.2777778, -0.3888889, -1.152778, 0.7083333,
               -1.277778, -0.06944445, 0.2083333, -0.6944445, 0.3055556, -0.25, -0.5833334,
               0.3194444, -0.6666667, 0.5555556, 0.8472222, -0.09722224, 0.8888889, 0.25, 0.5694444,
               1.291667, -0.6944445, 0.5138889, 0.7638888, -0.1388889, 0.8611112, 0.3333333,
               -0.02777782, 0.875, -0.1111111, -0.25, -0.6527777, 0.3333333, 0.4166667, -0.01388889,
               -0.05555554, -0.1111111, -0.1111111, -0.1666667, -0.6666666, 0.4166667, 0.3333333,
               -0.1666667, -0.5555555, 0.3472222, -0.6388889},
              {1, 3, 4, 4}, pattern({1, 2, 2, 2}, 105));
  nn::ConvTranspose2d ct(4, 6, 3);
  CHECK(ct->weight.shape() == std::vector<int64_t>{4, 6, 3, 3});
  CHECK_THROWS_WITH(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)), Catch::Contains("divisible by groups"));
  CHECK_THROWS_WITH(nn::Conv2d(nn::Conv2dOptions(2, 2, 3).output_padding(1)),
                    Catch::Contains("only for transposed"));
  std::ostringstream os;
  os << nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1).bias(false));
  CHECK(os.str() == "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)");
}

TEST_CASE("nn: LayerNorm and GroupNorm match PyTorch") {
  check_layer(nn::LayerNorm(nn::LayerNormOptions({4})),
              {-0.5091579, 0.2248716, -0.4669235, 0.2945052, -0.5091578, 0.2248716, -0.4669235, 0.2945053},
              {2, 4}, pattern({2, 4}, 106));
  check_layer(nn::GroupNorm(2, 4),
              {-0.4346898, 0.3693796, -0.5687013, 0.2558528, 0.6310852, 0.3094574, 0.3340259,
               -0.3151996, 0.2412794, 0.7434595, 0.3261003, 0.8130194, 0.3550323, -0.4564995,
               0.2390992, 0.578973, 0.3007335, 0.6253463, -0.2977518, 0.3455036, -0.4049611,
               0.2587792, 0.8216277, 0.3391861},
              {2, 4, 3}, pattern({2, 4, 3}, 107));
  nn::LayerNorm ln(nn::LayerNormOptions({2, 3}).elementwise_affine(false));
  CHECK(ln->parameters().empty());
}

TEST_CASE("nn: activations match PyTorch") {
  const Tensor x = pattern({2, 3}, 100);
  check_layer(nn::GELU(nn::GELUOptions().approximate("tanh")),
              {-0.1683755, 0.345714, -0.154286, 0.4982912, -0.1231509, 0.6646316}, {2, 3}, x);
  check_layer(nn::SiLU(), {-0.2261624, 0.3112297, -0.1887703, 0.4405043, -0.1391433, 0.5808827}, {2, 3}, x);
  check_layer(nn::Softmax(1), {0.1854382, 0.5954924, 0.2190694, 0.3922738, 0.1443095, 0.4634167}, {2, 3}, x);
  check_layer(nn::LogSoftmax(0), {-1.567296, -0.3608848, -1.567296, -0.2339625, -1.194218, -0.2339625},
              {2, 3}, x);
  check_close(nn::ReLU()(x), loom::relu(x));
  check_close(nn::Sigmoid()(x), loom::sigmoid(x));
  check_close(nn::Tanh()(x), loom::tanh(x));
  check_close(nn::GELU()(x), loom::gelu(x));
  CHECK_THROWS_WITH(nn::GELU(nn::GELUOptions().approximate("fast")), Catch::Contains("'none' or 'tanh'"));
}

TEST_CASE("nn: pools, Flatten and Identity match PyTorch") {
  const Tensor x = pattern({1, 1, 4, 5}, 108);
  check_layer(nn::MaxPool2d(2), {0.5, 0.6666667, 1, 0.5}, {1, 1, 2, 2}, x);
  check_layer(nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(2).padding(1)),
              {-0.09259259, -0.05555554, 0.01851851, 0.03703704, 3.311369e-09, -0.03703703}, {1, 1, 2, 3}, x);
  check_layer(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({2, 3})),
              {-0.2083333, -0.08333332, 0.04166666, 0.08333334, 0.02777778, -0.2083333}, {1, 1, 2, 3}, x);
  CHECK(nn::Flatten()(x).shape() == std::vector<int64_t>{1, 20});
  CHECK(nn::Flatten(nn::FlattenOptions().start_dim(0).end_dim(2))(x).shape() == std::vector<int64_t>{4, 5});
  CHECK(nn::Identity()(x).is_same(x));
}

TEST_CASE("nn: BatchNorm uses batch stats in training, running stats in eval") {
  nn::BatchNorm1d bn(3);
  nn_test::fill_params(*bn);
  const Tensor b1 = pattern({4, 3}, 109), b2 = pattern({4, 3}, 110);
  check_close(bn(b1), {0.08222641, 0.6047192, 0.1157811, -0.8027267, 0.3834809, -0.5921814,
                       -0.249631, 0.1622426, -0.1497048, 0.3034647, 0.5162239, 0.2927718});
  bn(b2);
  check_close(bn->running_mean, {-0.02791667, -0.01208333, 0.00375});
  check_close(bn->running_var, {0.8887731, 0.9248843, 0.8887731});
  CHECK(bn->num_batches_tracked.item<int64_t>() == 2);
  bn->eval();
  check_close(bn(b1), {0.04197906, 0.5342951, 0.03585073, -0.5473116, 0.3898771, -0.4355819,
                       -0.179005, 0.245459, -0.1409365, 0.1893017, 0.4765279, 0.1537089});
  // Eval leaves the running statistics alone.
  check_close(bn->running_mean, {-0.02791667, -0.01208333, 0.00375});
  CHECK(bn->num_batches_tracked.item<int64_t>() == 2);
  CHECK(bn->state_dict().keys() == std::vector<std::string>{"weight", "bias", "running_mean",
                                                            "running_var", "num_batches_tracked"});

  nn::BatchNorm2d cumulative(nn::BatchNormOptions(2).momentum(std::nullopt));
  cumulative(pattern({2, 2, 2, 2}, 111));
  cumulative(pattern({2, 2, 2, 2}, 112));
  check_close(cumulative->running_var, {0.4432043, 0.4432043});
  nn::BatchNorm2d untracked(nn::BatchNormOptions(2).track_running_stats(false).affine(false));
  CHECK(untracked->state_dict().empty());
  untracked->eval();  // no running stats: batch statistics even in eval
  const Tensor y = untracked(pattern({2, 2, 2, 2}, 111));
  check_close(y.mean({0, 2, 3}), {0.0, 0.0});
  CHECK_THROWS_WITH(bn(pattern({2, 3, 2, 2}, 0)), Catch::Contains("expected 2D or 3D input (got 4D input)"));
  CHECK_THROWS_WITH(bn(pattern({2, 4}, 0)), Catch::Contains("expected 3 channels"));
  nn_test::check_grads_flow(*bn, bn(b1));
}

TEST_CASE("nn: Dropout respects train and eval") {
  loom::manual_seed(0);
  nn::Dropout drop(0.5);
  const Tensor x = loom::ones({1000});
  const auto v = nn_test::values(drop(x));
  int zeros = 0;
  for (double e : v) {
    CHECK((e == 0.0 || e == 2.0));
    zeros += e == 0.0;
  }
  CHECK(zeros > 400);
  CHECK(zeros < 600);
  drop->eval();
  CHECK(nn_test::same_values(drop(x), x));
  CHECK_THROWS_WITH(nn::Dropout(1.5), Catch::Contains("between 0 and 1"));
}

TEST_CASE("nn: Embedding zeroes and freezes the padding row") {
  nn::Embedding emb(nn::EmbeddingOptions(5, 3).padding_idx(-1));
  CHECK(emb->options.padding_idx() == 4);
  CHECK(nn_test::values(emb->weight.select(0, 4)) == std::vector<double>{0, 0, 0});
  const Tensor idx = loom::from_vector<int64_t>({0, 4, 2, 4}, {2, 2});
  const Tensor out = emb(idx);
  CHECK(out.shape() == std::vector<int64_t>{2, 2, 3});
  check_close(out.select(0, 0).select(0, 0), emb->weight.select(0, 0));
  out.sum().backward();
  CHECK(nn_test::values(emb->weight.grad().select(0, 4)) == std::vector<double>{0, 0, 0});
  CHECK(nn_test::values(emb->weight.grad().select(0, 0)) == std::vector<double>{1, 1, 1});
  CHECK_THROWS_WITH(nn::Embedding(nn::EmbeddingOptions(5, 3).padding_idx(5)),
                    Catch::Contains("padding_idx 5"));
}

TEST_CASE("nn: losses match PyTorch as modules and functions") {
  namespace F = nn::functional;
  const Tensor logits = pattern({3, 4}, 120);
  const Tensor target = loom::from_vector<int64_t>({1, 0, 3}, {3});
  const Tensor w = nn_test::tensor({1.0f, 2.0f, 0.5f, 1.5f}, {4});
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().weight(w).label_smoothing(0.1));
  check_close(ce(logits, target), {1.361923});
  CHECK(ce->state_dict().keys() == std::vector<std::string>{"weight"});
  check_close(F::cross_entropy(logits, target, nn::CrossEntropyLossOptions().ignore_index(0).reduction("sum")),
              {2.97759});
  check_close(nn::NLLLoss(nn::NLLLossOptions().reduction("none"))(loom::log_softmax(logits, 1), target),
              {2.09321, 0.66156, 0.8843798});
  const Tensor a = pattern({2, 3}, 121), b = pattern({2, 3}, 125, 0.7);
  check_close(nn::MSELoss()(a, b), {0.5100926});
  check_close(nn::L1Loss(nn::L1LossOptions().reduction("sum"))(a, b), {2.566667});
  check_close(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(a, b), {0.2700926});
  const Tensor t01 = (b > 0).to(loom::DType::Float32);
  check_close(nn::BCELoss()(loom::sigmoid(a), t01), {0.6471413});
  const Tensor pos = nn_test::tensor({1.0f, 2.0f, 3.0f}, {3});
  check_close(nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().pos_weight(pos))(a, t01), {0.805167});
  CHECK_THROWS_WITH(F::cross_entropy(logits, target, nn::CrossEntropyLossOptions().label_smoothing(2)),
                    Catch::Contains("label_smoothing"));
}
