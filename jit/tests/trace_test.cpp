// Capture and execution: a traced program runs to the eager results, on
// new inputs, and its text form reads back to the same graph.
#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/jit/jit.h>
#include <loom/loom.h>

#include <algorithm>

using loom::Tensor;
using loom::jit::Graph;

namespace {

// A two-layer MLP written with catalog ops only.
struct Mlp {
  Tensor w1 = loom::randn({16, 8}), b1 = loom::randn({16}), w2 = loom::randn({4, 16}), b2 = loom::randn({4});
  Tensor forward(const Tensor& x) const {
    Tensor h = loom::relu(loom::nn::functional::linear(x, w1, b1));
    return loom::nn::functional::linear(h, w2, b2).softmax(-1);
  }
  std::vector<std::pair<std::string, Tensor>> params() const {
    return {{"fc1.weight", w1}, {"fc1.bias", b1}, {"fc2.weight", w2}, {"fc2.bias", b2}};
  }
};

Graph trace_mlp(const Mlp& m, const Tensor& x) {
  return loom::jit::trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{m.forward(in[0])}; }, {x},
                          m.params(), {{"x"}});
}

}  // namespace

TEST_CASE("a traced MLP runs to the eager result on new inputs") {
  loom::manual_seed(0);
  Mlp m;
  Graph g = trace_mlp(m, loom::randn({3, 8}));
  INFO(g.str());
  CHECK(g.inputs().size() == 5);
  CHECK(g.nodes().size() == 4);  // linear, relu, linear, softmax
  CHECK(g.nodes()[0]->op->name() == "linear");
  const Tensor x = loom::randn({3, 8});
  const auto out = loom::jit::run(g, {x});
  REQUIRE(out.size() == 1);
  CHECK(loom::allclose(out[0], m.forward(x)));
}

TEST_CASE("the text form reads back to the same graph") {
  loom::manual_seed(1);
  Mlp m;
  Graph g = trace_mlp(m, loom::randn({2, 8}));
  Graph back = loom::jit::parse_graph(g.str());
  CHECK(loom::jit::same_structure(g, back));
  CHECK(back.str() == g.str());
}

TEST_CASE("tensors the program reads become constants; in-place ops yield new values") {
  const Tensor scale = loom::full({4}, 2.0f);
  Graph g = loom::jit::trace(
      [&](const std::vector<Tensor>& in) {
        Tensor y = in[0] * scale;
        y.add_(1.0);
        return std::vector<Tensor>{y, in[0] + in[0]};
      },
      {loom::ones({4})});
  INFO(g.str());
  REQUIRE(g.tensors().count("c0"));
  CHECK(g.inputs()[1]->kind == loom::jit::InputKind::Constant);
  // The scalar becomes a 0-d constant (its fill is not a node: the constant
  // holds the filled value); add_ writes mul's result.
  REQUIRE(g.nodes().size() == 3);
  const loom::jit::Node& add = *g.nodes().at(1);
  CHECK(add.op->name() == "add_");
  CHECK(add.inputs[1]->kind == loom::jit::InputKind::Constant);
  CHECK(add.inputs[0] == g.nodes()[0]->outputs[0]);
  CHECK(add.outputs[0] != add.inputs[0]);
  CHECK(g.outputs()[0] == add.outputs[0]);
  const auto out = loom::jit::run(g, {loom::arange(4, loom::DType::Float32)});
  CHECK(out[0].to_vector<float>() == std::vector<float>{1, 3, 5, 7});
  CHECK(out[1].to_vector<float>() == std::vector<float>{0, 2, 4, 6});
}

TEST_CASE("what a graph cannot hold is refused with an error naming it") {
  const Tensor x = loom::ones({2, 3});
  // A view of an input made before the trace began: the graph cannot tell
  // what it is.
  const Tensor xt = x.t();
  CHECK_THROWS_WITH(loom::jit::trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * xt.t()}; },
                                     {x}),
                    Catch::Contains("loom::t reads a tensor that shares the memory of %input0") &&
                        Catch::Contains("a view made before the trace began"));
  // Inputs of another shape, dtype or count at run time.
  Graph g = loom::jit::trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2}; }, {x});
  CHECK_THROWS_WITH(loom::jit::run(g, {loom::ones({3, 3})}),
                    Catch::Contains("input 0 (%input0) is float32[3, 3] on cpu:0 but the graph was traced with "
                                    "float32[2, 3] on cpu:0"));
  CHECK_THROWS_WITH(loom::jit::run(g, {x.to(loom::DType::Float64)}), Catch::Contains("float64[2, 3]"));
  CHECK_THROWS_WITH(loom::jit::run(g, {}), Catch::Contains("the graph takes 1 input(s), got 0"));
}

TEST_CASE("views, reshapes, splits and copies are captured with their arguments") {
  auto program = [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];                            // [4, 6]
    Tensor a = x.t().contiguous().view({-1, 4});        // t, contiguous, view
    Tensor b = x.reshape({2, 12}).narrow(1, 2, 5);      // view (viewable), narrow
    auto parts = loom::chunk(x, 2, 1);                  // narrow twice
    Tensor c = parts[0].unsqueeze(0).expand({3, 4, 3}); // unsqueeze, expand
    Tensor d = loom::slice(x, 0, 1, std::nullopt, 2).select(1, -1);  // slice.Tensor, select.int
    Tensor e = x.permute({1, 0}).clone().squeeze(0);    // permute, clone, squeeze.dim
    return std::vector<Tensor>{a * 1, b + 0, c.sum(), d * 2, e.detach() + parts[1].sum()};
  };
  const Tensor x0 = loom::randn({4, 6});
  Graph g = loom::jit::trace(program, {x0});
  INFO(g.str());
  std::vector<std::string> ops;
  for (const auto& n : g.nodes()) ops.push_back(n->op->name());
  for (const char* op : {"t", "contiguous", "view", "narrow", "unsqueeze", "expand", "slice.Tensor", "select.int",
                         "permute", "clone", "squeeze.dim", "detach"})
    CHECK(std::find(ops.begin(), ops.end(), op) != ops.end());
  CHECK(g.str().find("loom::view(%") != std::string::npos);
  CHECK(g.str().find("size=[-1, 4]") != std::string::npos);  // as written, not as resolved
  const Tensor x = loom::randn({4, 6});
  const auto got = loom::jit::run(g, {x});
  const auto want = program({x});
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(loom::allclose(got[i], want[i]));
  CHECK(loom::jit::same_structure(g, loom::jit::parse_graph(g.str())));
}

TEST_CASE("a graph traced on sim runs there") {
  const loom::Device sim("sim");
  const Tensor x = loom::arange(6, loom::DType::Float32).view({2, 3}).to(sim);
  Graph g = loom::jit::trace(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] + in[0]).sum(std::vector<int64_t>{1})}; },
      {x});
  const auto out = loom::jit::run(g, {x});
  CHECK(out[0].device() == sim);
  CHECK(out[0].cpu().to_vector<float>() == std::vector<float>{6, 24});
}

TEST_CASE("a dynamic batch runs on any batch size and refuses other dimensions") {
  loom::manual_seed(2);
  Mlp m;
  loom::jit::TraceOptions options;
  options.dynamic_batch = true;
  Graph g = loom::jit::trace(
      [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{m.forward(in[0].view({-1, 8})).view({-1})}; },
      {loom::randn({3, 8})}, m.params(), options);
  INFO(g.str());
  CHECK(g.inputs()[0]->sizes == std::vector<int64_t>{-1, 8});
  CHECK(g.str().find("float32[?, 8]") != std::string::npos);
  for (int64_t batch : {1, 6}) {
    const Tensor x = loom::randn({batch, 8});
    CHECK(loom::allclose(loom::jit::run(g, {x})[0], m.forward(x).view({-1})));
  }
  CHECK_THROWS_WITH(loom::jit::run(g, {loom::randn({4, 7})}),
                    Catch::Contains("is float32[4, 7] on cpu:0 but the graph was traced with float32[?, 8] on cpu:0"));
  CHECK(loom::jit::same_structure(g, loom::jit::parse_graph(g.str())));
  CHECK_THROWS_WITH(loom::jit::parse_graph("graph(%x : float32[2, ?] @cpu:0):\n  return (%x)"),
                    Catch::Contains("only the first dimension may be '?'"));
}

TEST_CASE("the executor writes a node's result into an input that dies there, and never into one still seen") {
  Graph g = loom::jit::trace(
      [](const std::vector<Tensor>& in) {
        Tensor a = in[0] * 2;        // dies at relu: relu_ writes it
        Tensor b = loom::relu(a);
        Tensor c = in[0] * 3;        // an output too: relu must not write it
        return std::vector<Tensor>{loom::relu(b + 1), c, loom::relu(c), loom::relu(in[0])};
      },
      {loom::ones({4})});
  const Tensor x = loom::arange(4, loom::DType::Float32) - 1;  // -1 0 1 2
  loom::DispatchTrace trace;
  const auto out = loom::jit::run(g, {x});
  std::vector<std::string> ran;
  for (const auto& e : trace.events()) ran.push_back(e.op->name());
  CHECK(std::count(ran.begin(), ran.end(), "relu_") == 2);  // relu(a), relu(b + 1)
  CHECK(std::count(ran.begin(), ran.end(), "relu") == 2);   // relu(c), relu(x): still seen
  CHECK(std::count(ran.begin(), ran.end(), "add_") == 1);   // b + 1
  CHECK(out[0].to_vector<float>() == std::vector<float>{1, 1, 3, 5});
  CHECK(out[1].to_vector<float>() == std::vector<float>{-3, 0, 3, 6});
  CHECK(out[2].to_vector<float>() == std::vector<float>{0, 0, 3, 6});
  CHECK(out[3].to_vector<float>() == std::vector<float>{0, 0, 1, 2});
  CHECK(x.to_vector<float>() == std::vector<float>{-1, 0, 1, 2});
}
