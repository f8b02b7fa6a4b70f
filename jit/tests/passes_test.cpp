// The passes: each on a graph made for it, and all of them (optimize) over
// the op samples — the optimised graph must give the unoptimised one's
// results, with the samples' tensors as inputs and as constants (then
// folding computes everything).
#include <catch2/catch.hpp>
#include <loom/jit/jit.h>
#include <loom/jit/passes.h>
#include <loom/loom.h>
#include <loom/opinfo.h>

#include <algorithm>

using loom::Tensor;
using loom::jit::Graph;

namespace {

std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> out;
  for (const auto& n : g.nodes()) out.push_back(n->op->name());
  return out;
}

bool has(const Graph& g, const std::string& op) {
  const auto ops = ops_of(g);
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

Graph trace1(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  return loom::jit::trace([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0])}; }, {x});
}

// Same dtype, shape and values (NaN equal to NaN).
bool identical(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.sizes() == b.sizes())) return false;
  const auto x = a.to(loom::DType::Float64).cpu().contiguous().to_vector<double>();
  const auto y = b.to(loom::DType::Float64).cpu().contiguous().to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i] || (x[i] != x[i] && y[i] != y[i]))) return false;
  return true;
}

bool same_results(const Graph& a, const Graph& b, const std::vector<Tensor>& inputs) {
  const auto x = loom::jit::run(a, inputs), y = loom::jit::run(b, inputs);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!identical(x[i], y[i])) return false;
  return true;
}

}  // namespace

TEST_CASE("dead code goes; in-place writes and random draws stay") {
  Graph g = trace1([](const Tensor& x) {
    (void)loom::exp(x);          // unused
    (void)loom::dropout(x, 0.5, true);  // unused but draws numbers
    Tensor y = x * 2;
    return y;
  }, loom::ones({4}));
  CHECK(has(g, "exp"));
  CHECK(loom::jit::eliminate_dead_code(g) == 1);
  CHECK_FALSE(has(g, "exp"));
  CHECK(has(g, "dropout"));
  g.validate();
}

TEST_CASE("constants fold; a constant written in place does not") {
  const Tensor w = loom::arange(4, loom::DType::Float32);
  auto f = [&](const Tensor& x) { return x * (w * 2 + 1); };
  Graph g = trace1(f, loom::ones({4}));
  const Graph before = loom::jit::parse_graph(g.str());
  REQUIRE(ops_of(g) == std::vector<std::string>{"mul", "add", "mul"});
  CHECK(loom::jit::fold_constants(g) == 2);
  CHECK(ops_of(g) == std::vector<std::string>{"mul"});
  const Tensor x = loom::randn({4});
  CHECK(identical(loom::jit::run(g, {x})[0], f(x)));
  // Written through a view: never folded.
  Graph h = trace1([&](const Tensor& x) {
    Tensor c = w.clone();  // a node: its result is a value, written below
    Tensor s = c * 3;
    c.view({2, 2}).add_(1);
    return x + s + c;
  }, loom::ones({4}));
  INFO(h.str());
  const Graph h0 = loom::jit::parse_graph(h.str());
  loom::jit::fold_constants(h);
  CHECK(has(h, "add_"));
  CHECK(identical(loom::jit::run(h, {x})[0], x + w * 3 + (w + 1)));
}

TEST_CASE("common subexpressions merge, but not across an in-place write") {
  Graph g = trace1([](const Tensor& x) { return loom::relu(x) + loom::relu(x); }, loom::ones({3}));
  CHECK(loom::jit::eliminate_common_subexpressions(g) == 1);
  CHECK(ops_of(g) == std::vector<std::string>{"relu", "add"});
  Graph h = trace1([](const Tensor& x) {
    Tensor y = x * 1;
    Tensor a = loom::exp(y);
    y.add_(1);
    return a + loom::exp(y);
  }, loom::ones({3}));
  CHECK(loom::jit::eliminate_common_subexpressions(h) == 0);
  const Tensor x = loom::randn({3});
  CHECK(loom::allclose(loom::jit::run(h, {x})[0], loom::exp(x) + loom::exp(x + 1)));
}

TEST_CASE("simplify removes identities, but not where the result is written") {
  Graph g = trace1([](const Tensor& x) {
    Tensor y = (x * 1 + 0) / 1;
    y = y.t().t().transpose(0, 1).transpose(1, 0).permute({1, 0}).permute({1, 0}).view({3, 4}).expand({3, 4});
    return loom::relu(y);
  }, loom::randn({3, 4}));
  INFO(g.str());
  loom::jit::optimize(g);
  CHECK(ops_of(g) == std::vector<std::string>{"relu"});
  const Tensor x = loom::randn({3, 4});
  CHECK(identical(loom::jit::run(g, {x})[0], loom::relu(x)));
  // y = x * 1 is fresh memory that add_ writes: replacing y by x would write x.
  Graph h = trace1([](const Tensor& x) {
    Tensor y = x * 1;
    y.add_(5);
    return y + x;
  }, loom::ones({2}));
  loom::jit::optimize(h);
  CHECK(has(h, "mul"));
  const Tensor z = loom::ones({2});
  CHECK(loom::jit::run(h, {z})[0].to_vector<float>() == std::vector<float>{7, 7});
  CHECK(z.to_vector<float>() == std::vector<float>{1, 1});
}

TEST_CASE("optimize keeps every op sample's results, with its tensors as inputs and as constants") {
  size_t checked = 0, folded_to_nothing = 0;
  std::vector<std::string> untraceable;
  for (const auto& [name, samples] : loom::opinfo::op_samples()) {
    if (samples.compare == loom::opinfo::Compare::Statistical) continue;  // random results
    const loom::OpDef* op = loom::Dispatcher::instance().find(name);
    if (!op || op->schema().is_inplace()) continue;
    const auto made = samples.make(loom::opinfo::SampleContext(loom::DType::Float32, 7));
    for (const auto& s : made) {
      INFO("op " << name << ", sample '" << s.label << "'");
      try {
        (void)loom::opinfo::run_sample(*op, s);
      } catch (const std::exception&) {
        continue;  // the sample is not for float32 (bitwise ops ...)
      }
      // Inputs: the sample's defined tensors, in order.
      std::vector<Tensor> inputs;
      for (const auto& t : s.tensors)
        if (t) inputs.push_back(*t);
      auto as_inputs = [&](const std::vector<Tensor>& in) {
        std::vector<std::optional<Tensor>> args;
        size_t k = 0;
        for (const auto& t : s.tensors) args.push_back(t ? std::optional<Tensor>(in[k++]) : std::nullopt);
        loom::opinfo::RunOptions o;
        o.tensors = &args;
        return loom::opinfo::run_sample(*op, s, o);
      };
      auto as_constants = [&](const std::vector<Tensor>&) { return loom::opinfo::run_sample(*op, s); };
      Graph g, c;
      try {
        g = loom::jit::trace(as_inputs, inputs);
        c = loom::jit::trace(as_constants, {});
      } catch (const std::exception& e) {
        untraceable.push_back(name + " / " + s.label + ": " + e.what());
        continue;
      }
      const Graph g0 = loom::jit::parse_graph(g.str());
      Graph c0 = loom::jit::parse_graph(c.str());
      for (const auto& [n, t] : c.tensors()) c0.tensors()[n] = t;
      for (const auto& [n, t] : g.tensors()) const_cast<Graph&>(g0).tensors()[n] = t;
      loom::jit::optimize(g);
      loom::jit::optimize(c);
      CHECK(same_results(g0, g, inputs));
      CHECK(same_results(c0, c, {}));
      folded_to_nothing += c.nodes().empty();
      ++checked;
    }
  }
  std::string all;
  for (const auto& u : untraceable) all += "\n  " + u;
  INFO(untraceable.size() << " untraceable samples:" << all);
  CHECK(untraceable.empty());
  CHECK(checked > 500);
  CHECK(folded_to_nothing > checked / 2);
}

TEST_CASE("simplify keeps the contiguous copy of a transposed view (attention's head merge)") {
  // y.transpose(1, 2).contiguous().view(B, T, C), as nanoGPT writes it:
  // dropping the copy would leave a view that cannot be taken.
  Graph g = trace1([](const Tensor& x) { return x.transpose(1, 2).contiguous().view({2, 3, 20}); },
                   loom::randn({2, 4, 3, 5}));
  CHECK(loom::jit::optimize(g) == 0);
  CHECK(has(g, "contiguous"));
  const Tensor x = loom::randn({2, 4, 3, 5});
  CHECK(loom::jit::run(g, {x})[0].allclose(x.transpose(1, 2).contiguous().view({2, 3, 20}), 0, 0));
  // Of a fresh result it is a no-op and goes.
  Graph h = trace1([](const Tensor& x) { return loom::exp(x).contiguous(); }, loom::randn({3}));
  loom::jit::simplify(h);
  CHECK_FALSE(has(h, "contiguous"));
}

TEST_CASE("a training batch_norm updates its running statistics: never dropped, merged or folded across") {
  // running_mean and running_var are tensors the program reads: constants
  // of the graph, which batch_norm in training mode writes.
  Tensor rm = loom::zeros({3}), rv = loom::ones({3});
  auto f = [&](const Tensor& x) {
    (void)loom::batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.1, 1e-5);  // result unused
    Tensor a = loom::batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.1, 1e-5);
    Tensor b = loom::batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.1, 1e-5);  // same node as a
    return a + b + rm * 2;  // rm read after the updates: not a foldable constant
  };
  const Tensor x = loom::randn({8, 3});
  Graph g = trace1(f, x);
  INFO(g.str());
  const auto traced_ops = ops_of(g);
  REQUIRE(std::count(traced_ops.begin(), traced_ops.end(), "batch_norm") == 3);
  loom::jit::optimize(g);
  const auto ops = ops_of(g);
  CHECK(std::count(ops.begin(), ops.end(), "batch_norm") == 3);
  // Same updates and result as eager, from the same starting statistics.
  rm.zero_();
  rv.fill_(1);
  const Tensor expected = f(x);
  const auto rm_eager = rm.to_vector<float>(), rv_eager = rv.to_vector<float>();
  rm.zero_();
  rv.fill_(1);
  CHECK(identical(loom::jit::run(g, {x})[0], expected));
  CHECK(rm.to_vector<float>() == rm_eager);
  CHECK(rv.to_vector<float>() == rv_eager);
}
