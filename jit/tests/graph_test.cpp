// The IR on its own: building by hand, printing, parsing (and its errors),
// validation (and its errors).
#include <catch2/catch.hpp>
#include <loom/jit/jit.h>
#include <loom/loom.h>

using loom::jit::Attr;
using loom::jit::Graph;
using loom::jit::parse_graph;

namespace {
const loom::OpDef& op(const char* name) { return loom::Dispatcher::instance().op(name); }
Attr int_attr(int64_t v) {
  Attr a;
  a.kind = Attr::Kind::Int, a.i = v;
  return a;
}
}  // namespace

TEST_CASE("attributes of every kind print and parse back") {
  const char* text = R"(graph(%x : float32[2, 3] @cpu:0,
      %y : int64[3] @cpu:0):
  %1 : float32[2] @cpu:0 = loom::sum(%x, dim=[1], keepdim=False, dtype=None)
  %2 : float32[2, 3] @cpu:0 = loom::add(%x, %x, alpha=0.5)
  %3 : float32[2, 3] @cpu:0 = loom::add(%2, %x, alpha=2)
  %4 : float32[4, 3] @cpu:0 = loom::cat([%2, %3], dim=0)
  %5 : float64[2] @cpu:0 = loom::sum(%x, dim=[1], keepdim=False, dtype=float64)
  %6 : float32[2, 3] @cpu:0 = loom::gelu(%x, approximate="tanh")
  return (%1, %4, %5, %6)
)";
  Graph g = parse_graph(text);
  CHECK(g.str() == text);
  CHECK(g.nodes()[1]->attrs[0].kind == Attr::Kind::Float);
  CHECK(g.nodes()[2]->attrs[0].kind == Attr::Kind::Int);
  CHECK(g.nodes()[3]->inputs.size() == 2);
  const auto out = loom::jit::run(g, {loom::ones({2, 3}), loom::zeros({3}, loom::DType::Int64)});
  CHECK(out[0].to_vector<float>() == std::vector<float>{3, 3});
  CHECK(out[1].sizes()[0] == 4);
  CHECK(out[2].dtype() == loom::DType::Float64);
}

TEST_CASE("parse errors name the line, the column and what was expected") {
  CHECK_THROWS_WITH(parse_graph("graph(%x : float32[2] @cpu:0):\n  %1 : float32[2] @cpu:0 = loom::relu(%y)\n  return (%1)"),
                    Catch::Contains("line 2") && Catch::Contains("%y is not defined before this use"));
  CHECK_THROWS_WITH(parse_graph("graph(%x : float32[2] @cpu:0):\n  %1 : float32[2] @cpu:0 = loom::reluu(%x)\n  return (%1)"),
                    Catch::Contains("unknown op 'reluu'") && Catch::Contains("did you mean 'relu'"));
  CHECK_THROWS_WITH(parse_graph("graph(%x : floatt[2] @cpu:0):\n  return (%x)"), Catch::Contains("unknown dtype 'floatt'"));
  CHECK_THROWS_WITH(parse_graph("graph(%x : float32[2] @cpu:0):\n  %1 : float32[2] @cpu:0 = loom::add(%x, %x, beta=1)\n  return (%1)"),
                    Catch::Contains("expected the argument 'alpha'"));
  CHECK_THROWS_WITH(parse_graph("graph(%x : float32[2] @cpu:0):\n  return (%x) junk"), Catch::Contains("text after the return line"));
  CHECK_THROWS_WITH(parse_graph("graph(%x : float32[2] @cpu:0, %x : float32[2] @cpu:0):\n  return (%x)"),
                    Catch::Contains("defined twice"));
}

TEST_CASE("validation names the node and what is wrong") {
  Graph g;
  loom::jit::Value* x = g.add_input("x", loom::DType::Float32, {2}, loom::cpu_device());
  // relu takes one tensor and no other argument: give it an attribute.
  loom::jit::Node* n = g.add_node(op("relu"), {x}, {int_attr(1)});
  g.add_output_value(*n, loom::DType::Float32, {2}, loom::cpu_device());
  g.add_graph_output(n->outputs[0]);
  CHECK_THROWS_WITH(g.validate(), Catch::Contains("node 0 (%1 : float32[2] @cpu:0 = loom::relu(%x))") &&
                                      Catch::Contains("1 non-tensor arguments, the schema has 0"));

  Graph h;
  loom::jit::Value* a = h.add_input("a", loom::DType::Float32, {2}, loom::cpu_device());
  loom::jit::Node* m = h.add_node(op("add"), {a}, {int_attr(1)});  // add needs two tensors
  h.add_output_value(*m, loom::DType::Float32, {2}, loom::cpu_device());
  h.add_graph_output(m->outputs[0]);
  CHECK_THROWS_WITH(h.validate(), Catch::Contains("1 tensor inputs, the schema takes 2"));
}
