// Freezing (loom/jit/passes.h): parameters become constants, an eval-mode
// batch_norm folds into the conv or linear before it, and the frozen graph
// gives the unfrozen one's results to rounding.
#include <catch2/catch.hpp>
#include <loom/jit/jit.h>
#include <loom/jit/passes.h>
#include <loom/loom.h>

#include <algorithm>

using loom::Tensor;
using loom::jit::Graph;
using loom::jit::InputKind;

namespace {

size_t count(const Graph& g, const std::string& op) {
  return static_cast<size_t>(std::count_if(g.nodes().begin(), g.nodes().end(),
                                           [&](const auto& n) { return n->op->name() == op; }));
}

size_t kind_count(const Graph& g, InputKind k) {
  return static_cast<size_t>(
      std::count_if(g.inputs().begin(), g.inputs().end(), [&](const auto* v) { return v->kind == k; }));
}

// A batch_norm's tensors, with statistics far from 0 and 1 so a fold that
// dropped one of them would show.
struct BatchNormParams {
  Tensor mean, var, gamma, beta;
  explicit BatchNormParams(int64_t c)
      : mean(loom::randn({c}) * 0.5), var(loom::rand({c}) + 0.5), gamma(loom::randn({c})), beta(loom::randn({c})) {}
  std::vector<std::pair<std::string, Tensor>> named(const std::string& p) const {
    return {{p + ".running_mean", mean}, {p + ".running_var", var}, {p + ".weight", gamma}, {p + ".bias", beta}};
  }
};

}  // namespace

TEST_CASE("freeze folds eval batch_norms into the convs before them (a ResNet basic block)") {
  loom::manual_seed(0);
  const Tensor x = loom::randn({2, 8, 10, 10});
  const Tensor w1 = loom::randn({8, 8, 3, 3}) * 0.2, w2 = loom::randn({8, 8, 3, 3}) * 0.2;
  const BatchNormParams bn1(8), bn2(8);
  const Tensor w1_before = w1.clone(), var2_before = bn2.var.clone();
  auto block = [&](const std::vector<Tensor>& in) {
    Tensor h = loom::relu(loom::batch_norm(loom::conv2d(in[0], w1, std::nullopt, {1}, {1}), bn1.mean, bn1.var,
                                           bn1.gamma, bn1.beta));
    Tensor y = loom::batch_norm(loom::conv2d(h, w2, std::nullopt, {1}, {1}), bn2.mean, bn2.var, bn2.gamma, bn2.beta);
    return std::vector<Tensor>{loom::relu(y + in[0])};
  };
  auto params = bn1.named("bn1");
  for (auto& p : bn2.named("bn2")) params.push_back(p);
  params.push_back({"conv1.weight", w1});
  params.push_back({"conv2.weight", w2});
  Graph g = loom::jit::trace(block, {x}, params);
  const Tensor want = loom::jit::run(g, {x})[0];
  REQUIRE(count(g, "batch_norm") == 2);

  CHECK(loom::jit::freeze(g) > 0);
  CHECK(count(g, "batch_norm") == 0);
  CHECK(count(g, "conv2d") == 2);
  CHECK(kind_count(g, InputKind::Parameter) == 0);
  const Tensor got = loom::jit::run(g, {x})[0];
  CHECK(got.allclose(want, 1e-4, 1e-5));
  // The model's own tensors are untouched: folding made new constants.
  CHECK(w1.allclose(w1_before, 0, 0));
  CHECK(bn2.var.allclose(var2_before, 0, 0));
}

TEST_CASE("freeze folds a batch_norm into a linear, with and without biases and affine parameters") {
  loom::manual_seed(1);
  const Tensor x = loom::randn({5, 6});
  const Tensor w = loom::randn({4, 6}), b = loom::randn({4});
  const BatchNormParams bn(4);
  for (bool with_bias : {true, false})
    for (bool affine : {true, false}) {
      INFO("bias " << with_bias << ", affine " << affine);
      auto f = [&](const std::vector<Tensor>& in) {
        Tensor y = loom::linear(in[0], w, with_bias ? std::optional<Tensor>(b) : std::nullopt);
        return std::vector<Tensor>{loom::batch_norm(y, bn.mean, bn.var, affine ? bn.gamma : Tensor(),
                                                    affine ? bn.beta : Tensor())};
      };
      Graph g = loom::jit::trace(f, {x}, {{"w", w}, {"b", b}, {"m", bn.mean}, {"v", bn.var}, {"g", bn.gamma}, {"be", bn.beta}});
      const Tensor want = loom::jit::run(g, {x})[0];
      CHECK(loom::jit::freeze_parameters(g) > 0);
      CHECK(loom::jit::fold_batch_norm(g) == 1);
      CHECK(count(g, "batch_norm") == 0);
      CHECK(loom::jit::run(g, {x})[0].allclose(want, 1e-4, 1e-5));
    }
}

TEST_CASE("fold_batch_norm leaves what it cannot fold") {
  loom::manual_seed(2);
  const Tensor x = loom::randn({2, 3, 6, 6});
  const Tensor w = loom::randn({4, 3, 3, 3});
  const BatchNormParams bn(4);
  SECTION("parameters not frozen: batch_norm's tensors are graph parameters, not constants") {
    auto f = [&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{loom::batch_norm(loom::conv2d(in[0], w), bn.mean, bn.var, bn.gamma, bn.beta)};
    };
    auto params = bn.named("bn");
    params.push_back({"conv.weight", w});
    Graph g = loom::jit::trace(f, {x}, params);
    CHECK(loom::jit::fold_batch_norm(g) == 0);
    CHECK(count(g, "batch_norm") == 1);
  }
  SECTION("the conv's result has another reader") {
    auto f = [&](const std::vector<Tensor>& in) {
      Tensor c = loom::conv2d(in[0], w);
      return std::vector<Tensor>{loom::batch_norm(c, bn.mean, bn.var, bn.gamma, bn.beta) + c};
    };
    Graph g = loom::jit::trace(f, {x});  // everything a constant already
    const Tensor want = loom::jit::run(g, {x})[0];
    CHECK(loom::jit::fold_batch_norm(g) == 0);
    CHECK(loom::jit::run(g, {x})[0].allclose(want));
  }
  SECTION("the batch_norm follows no conv or linear") {
    auto f = [&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{loom::batch_norm(loom::relu(in[0]), bn.mean.narrow(0, 0, 3),
                                                  bn.var.narrow(0, 0, 3))};
    };
    Graph g = loom::jit::trace(f, {x});
    CHECK(loom::jit::fold_batch_norm(g) == 0);
  }
}

TEST_CASE("freeze refuses a batch_norm in training mode and keeps parameters written in place") {
  const Tensor x = loom::randn({4, 3});
  const Tensor mean = loom::zeros({3}), var = loom::ones({3});
  auto training = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{loom::batch_norm(in[0], mean, var, {}, {}, /*training=*/true)};
  };
  Graph g = loom::jit::trace(training, {x}, {{"bn.running_mean", mean}, {"bn.running_var", var}});
  try {
    loom::jit::freeze(g);
    FAIL("freeze accepted a training-mode batch_norm");
  } catch (const loom::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("training mode") && Catch::Contains("eval"));
  }

  Tensor counter = loom::zeros({1});
  const Tensor scale = loom::full({3}, 2.0);
  auto counting = [&](const std::vector<Tensor>& in) {
    counter.add_(1);
    return std::vector<Tensor>{in[0] * scale};
  };
  Graph h = loom::jit::trace(counting, {x}, {{"steps", counter}, {"scale", scale}});
  CHECK(loom::jit::freeze_parameters(h) == 1);  // scale only
  CHECK(kind_count(h, InputKind::Parameter) == 1);
  CHECK(h.find("steps")->kind == InputKind::Parameter);
}
