// The fused attention ops (ops_attention.cpp, ops_attention_backward.cpp):
// which path scaled_dot_product_attention takes, that the fused composite
// and its gradient op agree with the decomposed path (fully masked rows and
// S = 0 included), the logsumexp output, grad() of both outputs at once,
// and the argument errors. Values are checked against a naive loop in
// nn_ops_test.cpp; gradcheck and gradgradcheck in the autograd catalog.
#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/loom.h>
#include <loom/plugin.hpp>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

using loom::DType;
using loom::Tensor;

namespace {

// The paths `op` took inside `trace`, in order.
std::vector<std::string> paths(const loom::DispatchTrace& trace, const std::string& op) {
  std::vector<std::string> r;
  for (const auto& e : trace.events())
    if (e.op && e.op->name() == op) r.push_back(loom::to_string(e.path));
  return r;
}

// Equal within tol, NaN where the other is NaN.
void check_same(const Tensor& a, const Tensor& b, double tol) {
  REQUIRE(a.sizes() == b.sizes());
  const auto x = a.to(DType::Float64).contiguous().to_vector<double>();
  const auto y = b.to(DType::Float64).contiguous().to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("element " << i << ": " << x[i] << " vs " << y[i]);
    if (std::isnan(y[i])) CHECK(std::isnan(x[i]));
    else if (std::isinf(y[i])) CHECK(x[i] == y[i]);
    else CHECK(std::abs(x[i] - y[i]) <= tol * (1 + std::abs(y[i])));
  }
}

// The decomposed path: dropout_p > 0 with no element dropped is impossible,
// so spell the composite out with ops, as the public op's fallback does.
Tensor decomposed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal, double scale) {
  Tensor s = loom::matmul(q, k.transpose(-2, -1)) * loom::full({}, scale, q.dtype());
  const loom::Scalar ninf(-INFINITY);
  if (causal)
    s = loom::where(loom::arange(k.size(-2)).unsqueeze(0) <= loom::arange(q.size(-2)).unsqueeze(1), s, ninf);
  if (mask.defined()) s = mask.dtype() == DType::Bool ? loom::where(mask, s, ninf) : s + mask;
  return loom::matmul(loom::softmax(s, -1), v);
}

// Each mask variant (none, causal, the bool mask, the float mask) through
// the fused op in `dtype` and the decomposed path in float64: the outputs
// and the three gradients agree within tol.
void check_against_decomposed(const Tensor& q0, const Tensor& k0, const Tensor& v0, const Tensor& bmask,
                              const Tensor& fmask, double scale, DType dtype, double tol) {
  struct Variant {
    Tensor mask;
    bool causal;
  };
  for (const Variant& m : {Variant{Tensor(), false}, Variant{Tensor(), true}, Variant{bmask, false},
                           Variant{fmask, false}}) {
    CAPTURE(m.causal, m.mask.defined());
    auto grads = [&](bool fused) {
      const DType t = fused ? dtype : DType::Float64;
      Tensor q = q0.to(t).detach().requires_grad_(), k = k0.to(t).detach().requires_grad_(),
             v = v0.to(t).detach().requires_grad_();
      const Tensor mask = m.mask.defined() && m.mask.dtype() != DType::Bool ? m.mask.to(t) : m.mask;
      const Tensor y = fused ? std::get<0>(loom::scaled_dot_product_attention_fused(q, k, v, mask, m.causal, scale))
                             : decomposed(q, k, v, mask, m.causal, scale);
      const Tensor w = loom::cos(loom::arange(0, y.numel(), 1, t)).view(y.sizes());
      (y * w).sum().backward();
      return std::vector<Tensor>{y.detach(), q.grad(), k.grad(), v.grad()};
    };
    const auto f = grads(true), d = grads(false);
    for (size_t i = 0; i < f.size(); ++i) {
      CAPTURE(i);
      check_same(f[i], d[i], tol);
    }
  }
}

}  // namespace

TEST_CASE("scaled_dot_product_attention runs the fused op unless dropout or a float mask needs a gradient",
          "[attention]") {
  loom::manual_seed(3);
  const std::string fused = "_scaled_dot_product_attention_fused", back = "_scaled_dot_product_attention_backward";
  {
    // The CPU plugin has kernels for both (float32 and float64): one call
    // each, no softmax.
    Tensor q = loom::randn({2, 3, 4}).requires_grad_(), k = loom::randn({2, 5, 4}), v = loom::randn({2, 5, 3});
    loom::DispatchTrace trace;
    loom::scaled_dot_product_attention(q, k, v, {}, 0.0, true).sum().backward();
    CHECK(paths(trace, fused) == std::vector<std::string>{"kernel"});
    CHECK(paths(trace, back) == std::vector<std::string>{"kernel"});
    CHECK(paths(trace, "softmax").empty());
  }
  {
    // bfloat16: the CPU kernels take float32 and float64 only, and the fused
    // op's composite is slower than the decomposed path: decomposed.
    Tensor q = loom::randn({2, 3, 4}, DType::BFloat16), k = loom::randn({2, 5, 4}, DType::BFloat16),
           v = loom::randn({2, 5, 3}, DType::BFloat16);
    loom::DispatchTrace trace;
    (void)loom::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
    CHECK(paths(trace, fused).empty());
    CHECK(paths(trace, "softmax").size() == 1);
  }
  // A device with kernels for both ops: sim, given kernels that decline
  // (UNSUPPORTED), so the ops' composites run after the routing chose them.
  static loom::Library lib("attention_fused_test", __FILE__, __LINE__);
  static const bool registered = [&] {
    auto decline = [](const LoomKernelCall&) {
      throw loom::plugin::Failure(LOOM_STATUS_UNSUPPORTED, "test kernel: always declines");
    };
    lib.impl(fused, "sim", decline).impl(back, "sim", decline);
    return true;
  }();
  (void)registered;
  const loom::Device sim("sim");
  Tensor q = loom::randn({2, 3, 4}).to(sim).requires_grad_(), k = loom::randn({2, 5, 4}).to(sim).requires_grad_(),
         v = loom::randn({2, 5, 3}).to(sim).requires_grad_();
  {
    loom::DispatchTrace trace;
    loom::scaled_dot_product_attention(q, k, v, {}, 0.0, true).sum().backward();
    CHECK(paths(trace, fused).size() == 1);
    CHECK(paths(trace, back).size() == 1);
  }
  {
    loom::DispatchTrace trace;
    (void)loom::scaled_dot_product_attention(q, k, v, {}, 0.3);
    CHECK(paths(trace, fused).empty());
    CHECK(paths(trace, "softmax").size() == 1);  // the decomposed path
  }
  Tensor fmask = loom::randn({3, 5}).to(sim);
  {
    loom::DispatchTrace trace;
    (void)loom::scaled_dot_product_attention(q, k, v, fmask);
    CHECK(paths(trace, fused).size() == 1);
  }
  fmask.requires_grad_();
  {
    loom::DispatchTrace trace;
    loom::scaled_dot_product_attention(q, k, v, fmask).sum().backward();
    CHECK(paths(trace, fused).empty());
    CHECK(fmask.grad().defined());
  }
  {
    loom::autograd::NoGradGuard no_grad;  // no gradient wanted: fused again
    loom::DispatchTrace trace;
    (void)loom::scaled_dot_product_attention(q, k, v, fmask);
    CHECK(paths(trace, fused).size() == 1);
  }
}

TEST_CASE("the fused op and its gradient op agree with the decomposed path", "[attention]") {
  loom::manual_seed(5);
  const Tensor q0 = loom::randn({2, 1, 6, 4}, DType::Float64), k0 = loom::randn({3, 7, 4}, DType::Float64),
               v0 = loom::randn({2, 3, 7, 5}, DType::Float64);
  Tensor bmask = loom::rand({6, 7}) > loom::Scalar(0.4);
  bmask.select(0, 2).fill_(false);  // a fully masked row: NaN on both paths
  const Tensor fmask = loom::randn({3, 6, 7}, DType::Float64);
  fmask.select(0, 1).select(0, 4).fill_(-INFINITY);  // an additive fully masked row: NaN gradients on both
  check_against_decomposed(q0, k0, v0, bmask, fmask, 0.6, DType::Float64, 1e-12);
}

TEST_CASE("the CPU's tiled kernels over several tiles, strided and broadcast operands", "[attention]") {
  // 150 queries and 200 keys: three query tiles and two key tiles of the
  // CPU kernels (64 x 128), a partial tile at each end. float32 against
  // the decomposed path in float64.
  loom::manual_seed(11);
  const Tensor q0 = loom::randn({2, 150, 3, 16}).transpose(1, 2);  // the heads view of a projection
  const Tensor k0 = loom::randn({2, 3, 200, 16}), v0 = loom::randn({1, 3, 200, 24}).expand({2, 3, 200, 24});
  Tensor bmask = loom::rand({150, 200}) > loom::Scalar(0.3);
  bmask.select(0, 70).fill_(false);  // a fully masked row: NaN output
  const Tensor fmask = loom::randn({3, 150, 200}) * 0.5;
  check_against_decomposed(q0, k0, v0, bmask, fmask, 0.25, DType::Float32, 2e-5);
}

TEST_CASE("the fused op's logsumexp, dtypes and empty keys", "[attention]") {
  loom::manual_seed(7);
  const Tensor q = loom::randn({2, 3, 4}), k = loom::randn({2, 5, 4}), v = loom::randn({2, 5, 6});
  Tensor mask = loom::rand({3, 5}) > loom::Scalar(0.5);
  mask.select(0, 1).fill_(false);
  const auto [out, lse] = loom::scaled_dot_product_attention_fused(q, k, v, mask, false, 0.5);
  CHECK(out.sizes() == loom::IntArrayRef({2, 3, 6}));
  CHECK(lse.sizes() == loom::IntArrayRef({2, 3}));
  const Tensor s = loom::where(mask, loom::matmul(q, k.transpose(1, 2)) * 0.5, loom::Scalar(-INFINITY));
  check_same(lse, loom::logsumexp(s, {-1}), 1e-6);
  CHECK(std::isinf(lse.select(1, 1).to_vector<float>()[0]));  // every key masked: -inf
  // 16-bit inputs: lse in float32, the output in the input's dtype.
  const auto [oh, lh] = loom::scaled_dot_product_attention_fused(q.to(DType::BFloat16), k.to(DType::BFloat16),
                                                                 v.to(DType::BFloat16), mask, false, 0.5);
  CHECK(oh.dtype() == DType::BFloat16);
  CHECK(lh.dtype() == DType::Float32);
  check_same(oh, out, 2e-2);
  // No keys: zeros (softmax over nothing times nothing), as the decomposed path.
  const Tensor k0 = loom::zeros({2, 0, 4}), v0 = loom::zeros({2, 0, 6});
  check_same(std::get<0>(loom::scaled_dot_product_attention_fused(q, k0, v0, {}, false, 0.5)), loom::zeros({2, 3, 6}),
             0);
  check_same(loom::scaled_dot_product_attention(q, k0, v0), loom::zeros({2, 3, 6}), 0);
}

TEST_CASE("grad() of both fused outputs at once (two roots on one node)", "[attention]") {
  loom::manual_seed(9);
  Tensor q = loom::randn({3, 4}, DType::Float64).requires_grad_(), k = loom::randn({5, 4}, DType::Float64),
         v = loom::randn({5, 2}, DType::Float64);
  const auto [o, l] = loom::scaled_dot_product_attention_fused(q, k, v, {}, false, 0.5);
  const Tensor go = loom::randn({3, 2}, DType::Float64), gl = loom::randn({3}, DType::Float64);
  const auto both = loom::autograd::grad({o, l}, {q}, {go, gl}, true);
  const auto summed = loom::autograd::grad({(o * go).sum() + (l * gl).sum()}, {q});
  check_same(both[0], summed[0], 1e-12);
}

TEST_CASE("the fused attention ops reject bad arguments with the op's name", "[attention]") {
  const Tensor q = loom::randn({2, 3, 4}), k = loom::randn({2, 5, 4}), v = loom::randn({2, 5, 6});
  CHECK_THROWS_WITH(loom::scaled_dot_product_attention_fused(q, k, v, loom::ones({3, 5}, DType::Bool), true, 1),
                    Catch::Contains("_scaled_dot_product_attention_fused: attn_mask must not be given when is_causal"));
  CHECK_THROWS_WITH(loom::scaled_dot_product_attention_fused(q, loom::randn({2, 4, 4}), v, {}, false, 1),
                    Catch::Contains("key and value must have the same sequence length"));
  const auto [o, l] = loom::scaled_dot_product_attention_fused(q, k, v, {}, false, 1);
  CHECK_THROWS_WITH(loom::scaled_dot_product_attention_backward(loom::randn({2, 3, 5}), q, k, v, {}, o, l, false, 1),
                    Catch::Contains("_scaled_dot_product_attention_backward: grad_out of shape [2, 3, 5] does not fit"));
  CHECK_THROWS_WITH(loom::scaled_dot_product_attention_backward(o, q, k, v, {}, o, o, false, 1),
                    Catch::Contains("logsumexp of shape [2, 3, 6] does not fit the forward's [2, 3]"));
}
