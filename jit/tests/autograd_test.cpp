// Autograd through graphs: a graph run with grad on records the same
// backward as eager code (its nodes are dispatched as eager calls are), so a
// traced model trains; gradcheck over traced versions of every op's
// gradient cases.
#include <catch2/catch.hpp>
#include <loom/jit/jit.h>
#include <loom/jit/module.h>
#include <loom/loom.h>
#include <loom/opinfo.h>

using loom::Tensor;

TEST_CASE("a traced model's parameters get the eager gradients") {
  loom::manual_seed(5);
  Tensor w = loom::randn({4, 3}).requires_grad_(), b = loom::randn({4}).requires_grad_();
  auto f = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{loom::relu(loom::nn::functional::linear(in[0], w, b)).sum()};
  };
  loom::jit::Graph g = [&] {
    loom::autograd::NoGradGuard no_grad;
    return loom::jit::trace(f, {loom::randn({2, 3})}, {{"w", w}, {"b", b}});
  }();
  const Tensor x = loom::randn({2, 3});
  loom::jit::run(g, {x})[0].backward();
  const Tensor gw = w.grad().clone(), gb = b.grad().clone();
  w.mutable_grad() = Tensor(), b.mutable_grad() = Tensor();
  f({x})[0].backward();
  CHECK(loom::allclose(gw, w.grad()));
  CHECK(loom::allclose(gb, b.grad()));
  // Loaded from a file, parameters are trainable too.
  loom::jit::Module m = loom::jit::load_buffer(loom::jit::serialize(g).data(), loom::jit::serialize(g).size());
  for (const auto& [name, p] : m.named_parameters()) CHECK(p.requires_grad());
  m.forward({x})[0].backward();
  for (const auto& [name, p] : m.named_parameters()) CHECK(p.grad().defined());
}

TEST_CASE("gradcheck passes through the traced graph of every op's gradient cases") {
  size_t checked = 0;
  for (const loom::OpDef* op : loom::Dispatcher::instance().ops()) {
    // A random op's cases reseed the generator inside their function (a
    // call the trace does not see): the graph's draws differ run to run.
    bool random = false;
    for (const auto& a : op->schema().args) random = random || a.type == loom::ArgType::Generator;
    if (random) continue;
    for (const loom::opinfo::GradCase& c : loom::opinfo::gradient_checks(*op)) {
      INFO("op " << op->name() << ", case '" << c.label << "'");
      // Cases shared by non-differentiable ops (comparisons ...) give no
      // gradient to check.
      bool differentiable = false;
      for (const Tensor& r : c.fn(c.inputs)) differentiable = differentiable || (r.defined() && r.requires_grad());
      if (!differentiable) continue;
      loom::jit::Graph g;
      try {
        g = loom::jit::trace(c.fn, c.inputs);
      } catch (const std::exception& e) {
        FAIL("trace failed: " << e.what());
      }
      auto through_graph = [&](const std::vector<Tensor>& in) { return loom::jit::run(g, in); };
      CHECK_NOTHROW(loom::autograd::gradcheck(through_graph, c.inputs, c.options));
      ++checked;
    }
  }
  CHECK(checked > 300);
}
