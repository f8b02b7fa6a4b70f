// Elementwise fusion: which nodes the pass joins and which it leaves, and
// that a fused graph gives the unfused graph's results — on the CPU (whose
// compiled region runs the same kernels, so bit for bit), on sim (which
// declines: op by op), under autograd, after a text round trip and a save.
#include <catch2/catch.hpp>
#include <loom/fusion.h>
#include <loom/jit/jit.h>
#include <loom/jit/module.h>
#include <loom/jit/passes.h>
#include <loom/loom.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

using loom::Tensor;
using loom::jit::Graph;

namespace {

size_t count_op(const Graph& g, const std::string& op) {
  return static_cast<size_t>(std::count_if(g.nodes().begin(), g.nodes().end(),
                                           [&](const auto& n) { return n->op->name() == op; }));
}

Graph trace_fn(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
               const std::vector<Tensor>& inputs) {
  return loom::jit::trace(f, inputs);
}

// Same dtype, shape and bits (NaN equal to NaN).
bool identical(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.sizes() == b.sizes())) return false;
  const auto x = a.to(loom::DType::Float64).cpu().contiguous().to_vector<double>();
  const auto y = b.to(loom::DType::Float64).cpu().contiguous().to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
  return true;
}

Tensor gelu_tanh(const Tensor& x) {
  return x * 0.5 * (1.0 + loom::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

}  // namespace

TEST_CASE("GELU written as eight ops becomes one fused node that gives eager's bits") {
  for (auto dtype : {loom::DType::Float32, loom::DType::Float64, loom::DType::BFloat16}) {
    INFO(loom::name(dtype));
    const Tensor x = loom::randn({3, 5001}).to(dtype);  // several tiles and a ragged end
    Graph g = trace_fn([](const std::vector<Tensor>& in) { return std::vector<Tensor>{gelu_tanh(in[0])}; }, {x});
    CHECK(count_op(g, "mul") >= 5);
    const size_t removed = loom::jit::fuse_elementwise(g);
    CHECK(removed >= 7);
    REQUIRE(g.nodes().size() == 1);
    CHECK(g.nodes()[0]->op->name() == "_fused");
    CHECK(identical(loom::jit::run(g, {x})[0], gelu_tanh(x)));
    // Batch sizes other than the traced one, and 1 element.
    const Tensor y = loom::randn({1}).to(dtype);
    CHECK(identical(loom::jit::run(g, {loom::randn({3, 5001}).to(dtype) * 0 + x})[0], gelu_tanh(x)));
    (void)y;
  }
}

TEST_CASE("a broadcast bias and a transposed input are read in place of their layouts") {
  const Tensor x = loom::randn({40, 300});
  const Tensor bias = loom::randn({300});
  const Tensor w = loom::randn({300, 40});
  auto f = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{loom::relu(in[0] + in[1]) * in[2].t() - 1.5};
  };
  Graph g = trace_fn(f, {x, bias, w});
  loom::jit::fuse_elementwise(g);
  CHECK(count_op(g, "_fused") == 1);
  CHECK(identical(loom::jit::run(g, {x, bias, w})[0], f({x, bias, w})[0]));
}

TEST_CASE("an intermediate read outside the region stays a result of its own") {
  auto f = [](const std::vector<Tensor>& in) {
    Tensor a = loom::exp(in[0]) + 1;  // read twice below
    Tensor b = loom::sigmoid(a) * 2;
    Tensor s = loom::sum(a);          // a reduction reads a
    return std::vector<Tensor>{b, s};
  };
  const Tensor x = loom::randn({8, 9});
  Graph g = trace_fn(f, {x});
  loom::jit::fuse_elementwise(g);
  CHECK(count_op(g, "_fused") == 2);  // exp+add, then sigmoid+mul
  const auto got = loom::jit::run(g, {x});
  const auto want = f({x});
  CHECK(identical(got[0], want[0]));
  CHECK(identical(got[1], want[1]));
}

TEST_CASE("integer and bool regions keep eager's promotion, wrapping and errors") {
  auto f = [](const std::vector<Tensor>& in) {
    Tensor a = loom::remainder(in[0] * 3 + in[1], 7);  // int32 and int64: promoted to int64
    Tensor m = loom::logical_and(a > 2, in[1] != 0);   // bool
    return std::vector<Tensor>{loom::where(m, a, -a) * 2.5};  // to float32
  };
  const Tensor x = loom::randint(-1000, 1000, {50, 60}).to(loom::DType::Int32);
  const Tensor y = loom::randint(-3, 3, {60});
  Graph g = trace_fn(f, {x, y});
  loom::jit::fuse_elementwise(g);
  CHECK(count_op(g, "_fused") == 1);
  CHECK(identical(loom::jit::run(g, {x, y})[0], f({x, y})[0]));

  // An integer division by zero inside a region is eager's error, not garbage.
  auto d = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{loom::remainder(in[0] + 1, in[1]) * 2}; };
  Graph h = trace_fn(d, {loom::ones({4}, loom::DType::Int64), loom::ones({4}, loom::DType::Int64)});
  loom::jit::fuse_elementwise(h);
  REQUIRE(count_op(h, "_fused") == 1);
  CHECK_THROWS_WITH(loom::jit::run(h, {loom::ones({4}, loom::DType::Int64), loom::zeros({4}, loom::DType::Int64)}),
                    Catch::Contains("zero"));
}

TEST_CASE("values written in place are never fused across the write") {
  auto f = [](const std::vector<Tensor>& in) {
    Tensor a = in[0] * 2;
    Tensor b = a + 1;
    a.add_(1);  // b must not move past this write
    return std::vector<Tensor>{b * a};
  };
  const Tensor x = loom::randn({16});
  Graph g = trace_fn(f, {x});
  loom::jit::fuse_elementwise(g);
  CHECK(identical(loom::jit::run(g, {x})[0], f({x})[0]));
}

TEST_CASE("a fused graph prints, parses, saves and loads to the same results") {
  const Tensor x = loom::randn({4, 33});
  Graph g = trace_fn([](const std::vector<Tensor>& in) { return std::vector<Tensor>{gelu_tanh(in[0])}; }, {x});
  loom::jit::optimize(g);
  REQUIRE(count_op(g, "_fused") == 1);
  const std::string text = g.str();
  CHECK(text.find("loom::_fused(") != std::string::npos);
  Graph p = loom::jit::parse_graph(text);
  for (const auto& [n, t] : g.tensors()) p.tensors()[n] = t;
  CHECK(loom::jit::same_structure(g, p));
  CHECK(identical(loom::jit::run(p, {x})[0], gelu_tanh(x)));
  const auto path = (std::filesystem::temp_directory_path() / "loom_fusion_test.loom").string();
  loom::jit::save(g, path);
  loom::jit::Module m = loom::jit::load(path);
  CHECK(identical(m.forward({x})[0], gelu_tanh(x)));
  std::filesystem::remove(path);
}

TEST_CASE("sim declines every region, which then runs op by op with sim's results") {
  const loom::Device sim("sim");
  const Tensor x = loom::randn({5, 7});
  Graph g = trace_fn([](const std::vector<Tensor>& in) { return std::vector<Tensor>{gelu_tanh(in[0])}; }, {x});
  loom::jit::fuse_elementwise(g);
  const std::string text = g.str();
  Graph on_sim = loom::jit::parse_graph(text, sim);
  for (const auto& [n, t] : g.tensors()) on_sim.tensors()[n] = t.to(sim);
  const Tensor y = loom::jit::run(on_sim, {x.to(sim)})[0];
  CHECK(y.device() == sim);
  CHECK(loom::allclose(y.cpu(), gelu_tanh(x), 1e-6, 1e-6));

  loom::fusion::RegionBuilder b;
  const int32_t in = b.input(loom::DType::Float32, 1);
  b.output(b.add(*loom::Dispatcher::instance().find("exp"), {in}, {}));
  const auto compiled = loom::fusion::compile(sim, b.region("exp"));
  CHECK(compiled.kernel == nullptr);
  CHECK_THAT(compiled.declined, Catch::Contains("sim declines"));
  CHECK(loom::fusion::compile(loom::cpu_device(), b.region("exp")).kernel != nullptr);
}

TEST_CASE("gradients through a fused node are eager's, from a fused backward graph") {
  const Tensor x0 = loom::randn({6, 10});
  const Tensor bias0 = loom::randn({10});
  auto f = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{gelu_tanh(in[0] + in[1]) * loom::sigmoid(in[0])};
  };
  Graph g = trace_fn(f, {x0, bias0});
  loom::jit::fuse_elementwise(g);
  REQUIRE(count_op(g, "_fused") == 1);
  Tensor a = x0.clone().requires_grad_(), ab = bias0.clone().requires_grad_();
  Tensor b = x0.clone().requires_grad_(), bb = bias0.clone().requires_grad_();
  const Tensor y = loom::jit::run(g, {a, ab})[0];
  REQUIRE(y.grad_fn());
  CHECK(y.grad_fn()->name() == "FusedBackward");  // the region's own derivative, not the ops'
  loom::sum(y * 3).backward();
  loom::sum(f({b, bb})[0] * 3).backward();
  CHECK(identical(a.grad(), b.grad()));
  CHECK(identical(ab.grad(), bb.grad()));  // the broadcast bias: summed back to its shape
  // A second call reuses the traced backward graph.
  a.mutable_grad() = Tensor();
  loom::sum(loom::jit::run(g, {a, ab})[0] * 3).backward();
  CHECK(identical(a.grad(), b.grad()));
}

TEST_CASE("a fused node passes gradcheck and double backward") {
  const Tensor x0 = loom::randn({3, 4}, loom::DType::Float64);
  Graph g = trace_fn([](const std::vector<Tensor>& in) { return std::vector<Tensor>{gelu_tanh(in[0])}; }, {x0});
  loom::jit::fuse_elementwise(g);
  REQUIRE(count_op(g, "_fused") == 1);
  CHECK(loom::autograd::gradcheck([&](const std::vector<Tensor>& in) { return loom::jit::run(g, in); },
                                  {x0.clone().requires_grad_()}));
  Tensor a = x0.clone().requires_grad_(), b = x0.clone().requires_grad_();
  auto ga = loom::autograd::grad({loom::sum(loom::jit::run(g, {a})[0])}, {a}, {}, true, true);
  auto gb = loom::autograd::grad({loom::sum(gelu_tanh(b))}, {b}, {}, true, true);
  auto gga = loom::autograd::grad({loom::sum(ga[0])}, {a});
  auto ggb = loom::autograd::grad({loom::sum(gb[0])}, {b});
  CHECK(loom::allclose(gga[0], ggb[0], 1e-10, 1e-12));
}

TEST_CASE("a malformed region is refused before any plugin sees it") {
  LoomFusedInstr bad{};
  bad.op = LOOM_FUSED_ADD;
  bad.num_args = 2;
  bad.args[0] = 0;
  bad.args[1] = 5;  // not before it
  LoomFusedInstr input{};
  input.op = LOOM_FUSED_INPUT;
  input.dtype = input.compute_dtype = LOOM_DTYPE_FLOAT32;
  LoomFusedInstr instrs[] = {input, bad};
  instrs[1].dtype = instrs[1].compute_dtype = LOOM_DTYPE_FLOAT32;
  int32_t out = 1;
  LoomFusedRegion r{};
  r.struct_size = sizeof r;
  r.num_inputs = 1;
  r.num_instrs = 2;
  r.instrs = instrs;
  r.num_outputs = 1;
  r.outputs = &out;
  CHECK_THROWS_WITH(loom::fusion::compile(loom::cpu_device(), r), Catch::Contains("does not come before it"));
}
