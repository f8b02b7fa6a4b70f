// cross_entropy and _cross_entropy_backward: the CPU plugin's fused kernels
// (through the dispatcher, checked to have run) against the core's
// composites (called directly), for every combination of the options; the
// derivative formula against the gradient op; the errors of both ops.
// (Values against torch: nn_ops_test.cpp and frontend_python/tests.)
#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/op_registry.h>
#include <loom/loom.h>
#include <loom/op_call.h>

#include <cmath>
#include <string>
#include <vector>

using loom::DType;
using loom::Tensor;

namespace {

struct Options {
  std::string reduction = "mean";
  int64_t ignore_index = -100;
  double ls = 0;
};

// `op` on `args` through its prepare and composite only: no kernel.
Tensor composite(const char* op, std::vector<const Tensor*> args, const Options& o) {
  const loom::OpDef& def = loom::Dispatcher::instance().op(op);
  loom::OpCall call(def);
  for (const Tensor* a : args) call.args.push_back(a);
  LoomValue r{}, i{}, f{};
  r.kind = LOOM_VALUE_STRING;
  r.u.str.data = o.reduction.data();
  r.u.str.size = static_cast<int64_t>(o.reduction.size());
  i.kind = LOOM_VALUE_INT;
  i.u.i = o.ignore_index;
  f.kind = LOOM_VALUE_FLOAT;
  f.u.f = o.ls;
  call.values.push_back(r);
  call.values.push_back(i);
  call.values.push_back(f);
  call.device = args[0]->device();
  def.prepare()(call);
  def.composite()(call);
  return call.result();
}

// Runs f under a trace and checks `op` ran as the CPU plugin's kernel.
template <class F>
Tensor on_kernel(const char* op, F f) {
  loom::DispatchTrace trace;
  Tensor r = f();
  bool found = false;
  for (const auto& e : trace.events())
    if (e.depth == 0 && e.op->name() == op) found = e.path == loom::DispatchPath::Kernel;
  INFO("op " << op);
  CHECK(found);
  return r;
}

void check_close(const Tensor& got, const Tensor& want, double tol) {
  REQUIRE(got.sizes() == want.sizes());
  REQUIRE(got.dtype() == want.dtype());
  const std::vector<double> g = got.to(DType::Float64).contiguous().to_vector<double>();
  const std::vector<double> w = want.to(DType::Float64).contiguous().to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << " got " << g[i] << " want " << w[i]);
    if (std::isnan(w[i])) CHECK(std::isnan(g[i]));
    else CHECK(std::fabs(g[i] - w[i]) <= tol * (1 + std::fabs(w[i])));
  }
}

Tensor targets(const std::vector<int64_t>& shape, int64_t C, int64_t seed) {
  std::vector<int64_t> v(static_cast<size_t>(loom::shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (static_cast<int64_t>(i) * 5 + seed) % C;
  return loom::from_vector<int64_t>(v, shape);
}

}  // namespace

TEST_CASE("cross_entropy: the CPU kernels match the composites for every option", "[nn][cross_entropy]") {
  loom::manual_seed(11);
  struct Shape {
    std::vector<int64_t> input, target;
  };
  const std::vector<Shape> shapes{{{6, 5}, {6}}, {{3, 40}, {3}}, {{7}, {}}, {{2, 4, 3, 5}, {2, 3, 5}}};
  for (DType dt : {DType::Float32, DType::Float64}) {
    const double tol = dt == DType::Float64 ? 1e-12 : 2e-5;
    for (const Shape& s : shapes) {
      const int64_t C = s.input.size() == 1 ? s.input[0] : s.input[1];
      const Tensor x = loom::randn(s.input, dt) * 3.0;
      const Tensor t = targets(s.target, C, static_cast<int64_t>(s.input.size()));
      const Tensor w = loom::rand({C}, dt) + 0.5;
      for (const char* reduction : {"none", "mean", "sum"}) {
        const Tensor g = loom::randn(std::string(reduction) == "none" ? s.target : std::vector<int64_t>{}, dt);
        for (bool weighted : {false, true}) {
          for (int64_t ignore : {int64_t{-100}, int64_t{2}}) {
            for (double ls : {0.0, 0.3}) {
              INFO("dtype " << loom::name(dt) << " input " << loom::shape_str(s.input) << " " << reduction
                            << (weighted ? " weighted" : "") << " ignore_index " << ignore << " ls " << ls);
              const Options o{reduction, ignore, ls};
              const Tensor wt = weighted ? w : Tensor();
              check_close(on_kernel("cross_entropy",
                                    [&] { return loom::cross_entropy(x, t, wt, ignore, reduction, ls); }),
                          composite("cross_entropy", {&x, &t, &wt}, o), tol);
              check_close(on_kernel("_cross_entropy_backward",
                                    [&] { return loom::cross_entropy_backward(g, x, t, wt, ignore, reduction, ls); }),
                          composite("_cross_entropy_backward", {&g, &x, &t, &wt}, o), tol);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("cross_entropy: backward runs _cross_entropy_backward; probability targets get their gradients",
          "[nn][cross_entropy]") {
  loom::manual_seed(12);
  const Tensor x = loom::randn({4, 5}, DType::Float64).requires_grad_();
  const Tensor t = targets({4}, 5, 1);
  const Tensor w = loom::rand({5}, DType::Float64) + 0.5;
  {
    loom::DispatchTrace trace;
    loom::cross_entropy(x, t, w, 3, "sum", 0.1).backward();
    bool fused = false;
    for (const auto& e : trace.events()) fused |= e.op->name() == "_cross_entropy_backward";
    CHECK(fused);
  }
  const Tensor want = loom::cross_entropy_backward(loom::ones({}, DType::Float64), x.detach(), t, w, 3, "sum", 0.1);
  check_close(x.grad(), want, 1e-14);

  // A weight that requires grad: refused with class indices (as PyTorch).
  const Tensor wg = w.clone().requires_grad_();
  CHECK_THROWS_WITH(loom::cross_entropy(x, t, wg).backward(),
                    Catch::Contains("cross_entropy: the derivative for 'weight' is not implemented for class-index"));
  // Probability targets: the target's and the weight's gradients, as PyTorch
  // (which computes -Σ w q' log p with differentiable ops).
  const Tensor q = loom::softmax(loom::randn({4, 5}, DType::Float64), 1).requires_grad_();
  const Tensor xp = x.detach().requires_grad_();
  loom::cross_entropy(xp, q, wg, -100, "mean", 0.2).backward();
  const Tensor logp = loom::log_softmax(x.detach(), 1);
  check_close(q.grad(), logp * wg.detach() * (-0.8 / 4), 1e-14);
  check_close(wg.grad(), loom::sum(logp * (q.detach() * 0.8 + 0.04), loom::IntArrayRef{0}) * (-1.0 / 4), 1e-14);
}

TEST_CASE("_cross_entropy_backward: argument errors name the op", "[nn][cross_entropy]") {
  const Tensor x = loom::zeros({3, 4});
  const Tensor t = loom::from_vector<int64_t>({0, 1, 3}, {3});
  CHECK_THROWS_WITH(loom::cross_entropy_backward(loom::ones({3}), x, t),
                    Catch::Contains("_cross_entropy_backward: expected grad_output of shape [] (the loss's for "
                                    "reduction='mean'"));
  CHECK_THROWS_WITH(loom::cross_entropy_backward(loom::ones({}), x, t, {}, -100, "none"),
                    Catch::Contains("expected grad_output of shape [3]"));
  CHECK_THROWS_WITH(loom::cross_entropy_backward(loom::ones({}, DType::Int64), x, t),
                    Catch::Contains("_cross_entropy_backward: expected a floating point grad_output, got int64"));
  CHECK_THROWS_WITH(loom::cross_entropy_backward(loom::ones({}), x, loom::from_vector<int64_t>({0, 4, 1}, {3})),
                    Catch::Contains("_cross_entropy_backward: target 4 is out of bounds for 4 classes (at flat "
                                    "index 1 of the target; ignore_index is -100)"));
  CHECK_THROWS_WITH(loom::cross_entropy_backward(loom::ones({}), x, t, {}, -100, "mean", -0.5),
                    Catch::Contains("_cross_entropy_backward: label_smoothing must be between 0.0 and 1.0"));
  CHECK_THROWS_WITH(loom::cross_entropy_backward(loom::ones({}), x, t, loom::ones({3})),
                    Catch::Contains("_cross_entropy_backward: weight tensor should be defined either for all 4"));
  CHECK_THROWS_WITH(loom::cross_entropy_backward(loom::ones({}), x, t.to(DType::Int32)),
                    Catch::Contains("expected target of dtype int64"));
  // Through the float16 composite too (the kernels take float32/float64).
  CHECK_THROWS_WITH(loom::cross_entropy(x.to(DType::Float16), loom::from_vector<int64_t>({0, -3, 1}, {3})),
                    Catch::Contains("cross_entropy: target -3 is out of bounds for 4 classes"));
}
