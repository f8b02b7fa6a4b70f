// nn_transformer_test.cpp — MultiheadAttention and TransformerEncoderLayer
// against PyTorch values (nn_reference_values.py) for fixed weights.
#include "nn_test_util.h"

#include <loom/loom.h>

#include <catch2/catch.hpp>

namespace nn = loom::nn;
using loom::Tensor;
using nn_test::check_close;
using nn_test::pattern;

namespace {
std::vector<std::string> keys(const nn::Module& m) { return m.state_dict().keys(); }
}  // namespace

TEST_CASE("nn: MultiheadAttention matches PyTorch") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 2).batch_first(true));
  CHECK(keys(*mha) == std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                               "out_proj.bias"});
  // PyTorch's init: zero biases.
  CHECK(nn_test::values(mha->in_proj_bias) == std::vector<double>(12, 0.0));
  CHECK(nn_test::values(mha->out_proj->bias) == std::vector<double>(4, 0.0));
  nn_test::fill_params(*mha);
  const Tensor q = pattern({2, 3, 4}, 130), k = pattern({2, 2, 4}, 131);
  auto [out, weights] = mha(q, k, k);
  CHECK(out.shape() == std::vector<int64_t>{2, 3, 4});
  check_close(out, {0.4719819, -0.05885691, 0.4936376, -0.1796325, 0.4779994, -0.03972147,
                    0.5258909, -0.2042303, 0.6310741, 0.03375593, 0.5197712, -0.2783726,
                    0.278374, -0.08475392, 0.6354514, -0.1592595, 0.2788888, -0.08425938,
                    0.6359259, -0.1597894, 0.2794037, -0.08376457, 0.6364005, -0.1603196});
  CHECK(weights.shape() == std::vector<int64_t>{2, 3, 2});
  check_close(weights, {0.4067757, 0.5932243, 0.3906974, 0.6093026, 0.6017046, 0.3982954,
                        0.5054524, 0.4945476, 0.5027267, 0.4972733, 0.5000001, 0.5000001});
  const Tensor kpm = loom::from_vector<bool>({false, true, false, false}, {2, 2});
  auto [masked, none] = mha(q, k, k, kpm, /*need_weights=*/false);
  CHECK_FALSE(none.defined());
  check_close(masked, {1.070602, 0.3831018, 0.7789351, -0.6759259, 1.070602, 0.3831018, 0.7789351,
                       -0.6759259, 1.070602, 0.3831018, 0.7789351, -0.6759259, 0.278374,
                       -0.08475392, 0.6354514, -0.1592595, 0.2788888, -0.08425938, 0.6359259,
                       -0.1597894, 0.2794037, -0.08376457, 0.6364005, -0.1603196});
  // Unbatched input gives the first batch element's result.
  auto [single, w1] = mha(q.select(0, 0), k.select(0, 0), k.select(0, 0));
  check_close(single, out.select(0, 0));
  CHECK(w1.shape() == std::vector<int64_t>{3, 2});
  nn_test::check_grads_flow(*mha, std::get<0>(mha(q, k, k)));
  CHECK_THROWS_WITH(nn::MultiheadAttention(6, 4), Catch::Contains("divisible by num_heads"));
  CHECK_THROWS_WITH(mha(q, pattern({2, 2, 5}, 0), pattern({2, 2, 5}, 0)),
                    Catch::Contains("expected embedding dim 4"));
}

TEST_CASE("nn: MultiheadAttention is_causal hides later keys") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 1));
  const Tensor x = pattern({3, 1, 4}, 140);
  auto [out, weights] = mha(x, x, x, Tensor(), true, Tensor(), true, /*is_causal=*/true);
  const auto w = nn_test::values(weights);  // (1, 3, 3)
  CHECK(w[1] == 0.0);
  CHECK(w[2] == 0.0);
  CHECK(w[5] == 0.0);
  CHECK(w[0] == Approx(1.0));
}

TEST_CASE("nn: TransformerEncoderLayer matches PyTorch (post-norm relu, pre-norm gelu)") {
  const Tensor src = pattern({2, 3, 4}, 132);
  nn::TransformerEncoderLayer post(
      nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).batch_first(true));
  CHECK(keys(*post) == std::vector<std::string>{
                           "self_attn.in_proj_weight", "self_attn.in_proj_bias",
                           "self_attn.out_proj.weight", "self_attn.out_proj.bias", "linear1.weight",
                           "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight",
                           "norm1.bias", "norm2.weight", "norm2.bias"});
  nn_test::fill_params(*post);
  check_close(post(src), {0.1749734, -0.2656813, 0.25, -0.9455937, 0.1749286, -0.2658952, 0.25,
                          -0.9455857, 0.1748841, -0.2661094, 0.25, -0.9455785, 0.286281,
                          -0.5502619, 0.25, -0.7402706, 0.2862426, -0.5506043, 0.25, -0.7411393,
                          0.2862044, -0.550944, 0.25, -0.7420053});
  nn_test::check_grads_flow(*post, post(src));

  nn::TransformerEncoderLayer pre(nn::TransformerEncoderLayerOptions(4, 2)
                                      .dim_feedforward(6)
                                      .dropout(0.0)
                                      .activation("gelu")
                                      .batch_first(true)
                                      .norm_first(true));
  nn_test::fill_params(*pre);
  check_close(pre(src), {0.8178209, -1.094818, 1.371301, -0.7900038, 1.151154, -0.761485, 1.704634,
                         -0.4566705, 1.484487, -0.4281517, 2.037967, -0.1233372, -0.2262144,
                         -0.02825969, 0.2332388, -0.0393429, 0.1071189, 0.3050736, 0.5665721,
                         0.2939904, 0.4404523, 0.638407, 0.8999054, 0.6273237});
  CHECK_THROWS_WITH(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(4, 2).activation("tanh")),
                    Catch::Contains("relu or gelu"));
}

TEST_CASE("nn: TransformerEncoderLayer dropout is active only in training") {
  loom::manual_seed(3);
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(8).dropout(0.5));
  const Tensor src = pattern({3, 2, 4}, 150);
  layer->eval();
  const auto a = nn_test::values(layer(src)), b = nn_test::values(layer(src));
  CHECK(a == b);
  layer->train();
  CHECK(nn_test::values(layer(src)) != a);
}
