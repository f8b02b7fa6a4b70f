// The fused optimizer ops: _adam_step_'s and _sgd_step_'s kernels (dense tensors) against their
// composite (the CPU kernel declines strided tensors, so transposed views run
// the composite), state included, in every floating dtype; and the errors.
#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/loom.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using loom::DType;
using loom::Tensor;

namespace {

struct State {
  Tensor p, g, m, v;
};

// The same values dense ([5, 7]) or as transposed views of [7, 5] storage.
State make_state(DType t, bool strided) {
  loom::manual_seed(7);
  std::vector<Tensor> base = {loom::randn({5, 7}), loom::randn({5, 7}), loom::randn({5, 7}) * 0.1,
                              loom::rand({5, 7}) * 0.01};
  std::vector<Tensor> out;
  for (const Tensor& b : base) {
    Tensor x = b.to(t);
    out.push_back(strided ? x.t().contiguous().t() : x.contiguous());
  }
  return {out[0], out[1], out[2], out[3]};
}

void step(State& s) { loom::adam_step_(s.p, s.g, s.m, s.v, 0.99, 0.9, 0.999, 1e-2, 1e-8); }

std::vector<double> values(const Tensor& t) { return t.to(DType::Float64).contiguous().to_vector<double>(); }

// Largest |a - b| / (|b| + 1e-300), elementwise.
double max_rel_diff(const Tensor& a, const Tensor& b) {
  const auto x = values(a), y = values(b);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]) / (std::abs(y[i]) + 1e-300));
  return worst;
}

}  // namespace

TEST_CASE("_adam_step_: the kernel and the composite agree on the parameter and both averages") {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    CAPTURE(loom::name(t));
    State dense = make_state(t, false), strided = make_state(t, true);
    REQUIRE_FALSE(strided.p.is_contiguous());
    std::vector<std::string> paths;
    for (int i = 0; i < 3; ++i) {
      step(dense);
      loom::DispatchTrace trace;
      step(strided);
      for (const auto& e : trace.events())
        if (e.op && e.op->name() == "_adam_step_") paths.push_back(loom::to_string(e.path));
    }
    CHECK(paths == std::vector<std::string>(3, "composite"));  // the kernel declined the strided views
    // Same steps, same rounding points (compute type, one rounding per tensor).
    CHECK(values(dense.p) == values(strided.p));
    CHECK(values(dense.m) == values(strided.m));
    CHECK(values(dense.v) == values(strided.v));
  }
}

TEST_CASE("_adam_step_ matches Adam's formula written out in float64") {
  State s = make_state(DType::Float64, false);
  const Tensor p0 = s.p.clone(), g = s.g.clone(), m0 = s.m.clone(), v0 = s.v.clone();
  step(s);
  const Tensor m1 = m0 * 0.9 + g * 0.1, v1 = v0 * 0.999 + g * g * 0.001;
  const Tensor p1 = p0 * 0.99 - m1 / (loom::sqrt(v1) + 1e-8) * 1e-2;
  CHECK(max_rel_diff(s.m, m1) < 1e-12);
  CHECK(max_rel_diff(s.v, v1) < 1e-12);
  CHECK(max_rel_diff(s.p, p1) < 1e-12);
}

TEST_CASE("_adam_step_ names what does not match the parameter") {
  State s = make_state(DType::Float32, false);
  Tensor small = loom::zeros({5, 6});
  CHECK_THROWS_WITH(loom::adam_step_(s.p, small, s.m, s.v, 1, 0.9, 0.999, 1e-3, 1e-8),
                    Catch::Contains("grad has shape [5, 6] but the parameter has [5, 7]"));
  Tensor half = s.m.to(DType::Float16);
  CHECK_THROWS_WITH(loom::adam_step_(s.p, s.g, half, s.v, 1, 0.9, 0.999, 1e-3, 1e-8),
                    Catch::Contains("exp_avg has dtype float16 but the parameter has float32"));
  Tensor ints = loom::zeros({5, 7}, DType::Int64);
  CHECK_THROWS_WITH(loom::adam_step_(ints, ints, ints, ints, 1, 0.9, 0.999, 1e-3, 1e-8),
                    Catch::Contains("expected a floating point parameter, got int64"));
}

TEST_CASE("_sgd_step_: the kernel and the composite agree; the formula written out in float64") {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    for (const bool nesterov : {false, true}) {
      CAPTURE(loom::name(t), nesterov);
      // p, g, buffer: dense, and the same values as transposed views (declined
      // by the kernel: the composite runs).
      State dense = make_state(t, false), strided = make_state(t, true);
      std::vector<std::string> paths;
      for (int i = 0; i < 3; ++i) {
        loom::sgd_step_(dense.p, dense.g, dense.m, 1e-2, 0.9, 0.1, nesterov, 0.5);
        loom::DispatchTrace trace;
        loom::sgd_step_(strided.p, strided.g, strided.m, 1e-2, 0.9, 0.1, nesterov, 0.5);
        for (const auto& e : trace.events())
          if (e.op && e.op->name() == "_sgd_step_") paths.push_back(loom::to_string(e.path));
      }
      CHECK(paths == std::vector<std::string>(3, "composite"));
      CHECK(values(dense.p) == values(strided.p));
      CHECK(values(dense.m) == values(strided.m));
    }
  }
  State s = make_state(DType::Float64, false);
  const Tensor p0 = s.p.clone(), g = s.g.clone(), b0 = s.m.clone();
  loom::sgd_step_(s.p, s.g, s.m, 1e-2, 0.9, 0.1, true, 0.5);
  const Tensor d = g + p0 * 1e-2, b1 = b0 * 0.9 + d * 0.9, p1 = p0 - (d + b1 * 0.9) * 0.5;
  CHECK(max_rel_diff(s.m, b1) < 1e-12);
  CHECK(max_rel_diff(s.p, p1) < 1e-12);
  Tensor small = loom::zeros({5, 6}, DType::Float64);
  CHECK_THROWS_WITH(loom::sgd_step_(s.p, s.g, small, 0, 0.9, 0, false, 0.1),
                    Catch::Contains("momentum_buffer has shape [5, 6] but the parameter has [5, 7]"));
}
