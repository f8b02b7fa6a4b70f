// The fused attention kernels against the CPU plugin, through loom. Needs a
// GPU: without one every case says why and returns (the tile algorithm is
// covered on the host by attention_ops_test.cu). Each case runs the fused
// forward, its backward op, and scaled_dot_product_attention with autograd
// on the GPU against a float64 reference on the CPU, compares within the
// dtype's tolerance (NaN where the reference has NaN: fully masked rows), and checks the cuda kernels themselves ran
// (the dispatch trace shows "kernel" for the fused ops, nothing fell back).
#include "device_test_util.hpp"

#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/loom.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

using loom::DType;
using loom::Tensor;

namespace {

using loom_cuda_test::gpu;
using loom_cuda_test::have_gpu;

double tolerance(DType t) {
  switch (t) {
    case DType::Float64: return 1e-9;
    case DType::Float32: return 1e-4;
    case DType::Float16: return 5e-3;
    default: return 3e-2;
  }
}

// |got - want| <= tol·(1 + |want|) everywhere, NaN exactly where want is NaN.
void check_close(const Tensor& got, const Tensor& want, DType t, const std::string& what) {
  INFO(what);
  REQUIRE(got.device() == gpu());
  REQUIRE(got.sizes() == want.sizes());
  const auto g = got.cpu().to(DType::Float64).contiguous().to_vector<double>();
  const auto w = want.to(DType::Float64).contiguous().to_vector<double>();
  const double tol = tolerance(t);
  size_t bad = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const bool ok = std::isnan(w[i]) ? std::isnan(g[i])
                    : std::isinf(w[i]) ? g[i] == w[i]
                                       : std::abs(g[i] - w[i]) <= tol * (1 + std::abs(w[i]));
    if (!ok && ++bad <= 3) FAIL_CHECK("element " << i << ": cuda " << g[i] << ", cpu " << w[i]);
  }
  CHECK(bad == 0);
}

// The paths `op` took on cuda inside `trace`.
std::vector<std::string> paths(const loom::DispatchTrace& trace, const std::string& op) {
  std::vector<std::string> r;
  for (const auto& e : trace.events())
    if (e.op && e.op->name() == op && e.device_type == gpu().type) r.push_back(loom::to_string(e.path));
  return r;
}

struct Inputs {
  Tensor q, k, v, mask, go;
  bool causal = false;
  double scale = 0.25;
};

Tensor to_gpu(const Tensor& t) { return t.defined() ? t.to(gpu()) : t; }

// Fused forward and backward on both devices; `native`: the cuda kernels
// must have run (else the composite is expected: declined cases).
void compare_fused(const Inputs& in, DType t, bool native = true) {
  auto cast = [&](const Tensor& x) { return x.defined() && x.dtype() != DType::Bool ? x.to(t) : x; };
  const Tensor q = cast(in.q), k = cast(in.k), v = cast(in.v), mask = cast(in.mask), go = cast(in.go);
  // The reference: the same rounded inputs in float64 on the CPU, so that the
  // comparison measures the kernels' error and not the CPU composite's own
  // rounding of every intermediate in float16 or bfloat16.
  auto wide = [](const Tensor& x) { return x.defined() && x.dtype() != DType::Bool ? x.to(DType::Float64) : x; };
  const auto [out, lse] =
      loom::scaled_dot_product_attention_fused(wide(q), wide(k), wide(v), wide(mask), in.causal, in.scale);
  const auto [gq, gk, gv] = loom::scaled_dot_product_attention_backward(
      wide(go), wide(q), wide(k), wide(v), wide(mask), out, lse, in.causal, in.scale);

  loom::DispatchTrace trace;
  const Tensor cq = to_gpu(q), ck = to_gpu(k), cv = to_gpu(v), cm = to_gpu(mask);
  const auto [dout, dlse] = loom::scaled_dot_product_attention_fused(cq, ck, cv, cm, in.causal, in.scale);
  check_close(dout, out, t, "output");
  check_close(dlse, lse, t, "logsumexp");
  // The backward from the reference's forward results (rounded as the kernel's
  // own would be), so only the backward differs.
  const auto [dq, dk, dv] = loom::scaled_dot_product_attention_backward(
      to_gpu(go), cq, ck, cv, cm, to_gpu(out.to(dout.dtype())), to_gpu(lse.to(dlse.dtype())), in.causal, in.scale);
  check_close(dq, gq, t, "grad_query");
  check_close(dk, gk, t, "grad_key");
  check_close(dv, gv, t, "grad_value");
  const std::string want = native ? "kernel" : "composite";
  CHECK(paths(trace, "_scaled_dot_product_attention_fused") == std::vector<std::string>{want});
  CHECK(paths(trace, "_scaled_dot_product_attention_backward") == std::vector<std::string>{want});
  CHECK_FALSE(trace.fell_back_on(gpu().type));
}

Inputs make(std::vector<int64_t> qs, std::vector<int64_t> ks, std::vector<int64_t> vs) {
  Inputs in;
  in.q = loom::randn(qs, DType::Float64);
  in.k = loom::randn(ks, DType::Float64);
  in.v = loom::randn(vs, DType::Float64);
  std::vector<int64_t> os = qs;  // q has the full batch shape (else set go yourself)
  os.back() = vs.back();
  in.go = loom::randn(os, DType::Float64);
  return in;
}

const DType kDTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

// The kernels run only where the composite would not fit by default
// (option attention_kernels=auto); these tests are of the kernels.
struct KernelsAlways {
  KernelsAlways() { loom::set_device_option("cuda", "attention_kernels", "always"); }
  ~KernelsAlways() { loom::set_device_option("cuda", "attention_kernels", "auto"); }
};

}  // namespace

TEST_CASE("cuda fused attention: plain, causal, L != S, odd head dims") {
  if (!have_gpu()) return;
  const KernelsAlways kernels;
  loom::manual_seed(1);
  for (DType t : kDTypes) {
    CAPTURE(loom::name(t));
    compare_fused(make({2, 3, 37, 64}, {2, 3, 45, 64}, {2, 3, 45, 64}), t);
    Inputs causal = make({2, 50, 32}, {2, 70, 32}, {2, 70, 48});
    causal.causal = true;
    compare_fused(causal, t);
    compare_fused(make({1, 1, 7}, {1, 129, 7}, {1, 129, 128}), t);
    Inputs big = make({2, 130, 128}, {2, 90, 128}, {2, 90, 100});
    big.scale = 0.1;
    compare_fused(big, t);
  }
}

TEST_CASE("cuda fused attention: masks, fully masked rows, broadcast and strided operands") {
  if (!have_gpu()) return;
  const KernelsAlways kernels;
  loom::manual_seed(2);
  for (DType t : kDTypes) {
    CAPTURE(loom::name(t));
    Inputs b = make({2, 4, 20, 16}, {2, 4, 33, 16}, {2, 4, 33, 16});
    b.mask = loom::rand({4, 20, 33}, DType::Float32) > loom::Scalar(0.3);  // broadcast over dim 0
    b.mask.select(1, 5).fill_(false);  // row 5: every key masked -> NaN, as the composite
    compare_fused(b, t);
    Inputs f = make({3, 9, 24}, {3, 40, 24}, {3, 40, 8});
    f.mask = loom::randn({1, 40}, DType::Float64);  // one additive row for every query
    compare_fused(f, t);
    // Broadcast batch (q shared across heads), key/value transposed views.
    Inputs s = make({2, 1, 12, 32}, {2, 3, 32, 19}, {2, 3, 19, 32});
    s.k = s.k.transpose(-2, -1);
    s.go = loom::randn({2, 3, 12, 32}, DType::Float64);
    compare_fused(s, t);
  }
}

TEST_CASE("cuda fused attention declines head dims past 128 to the composite") {
  if (!have_gpu()) return;
  const KernelsAlways kernels;
  loom::manual_seed(3);
  compare_fused(make({2, 5, 160}, {2, 6, 160}, {2, 6, 8}), DType::Float32, false);
}

TEST_CASE("cuda scaled_dot_product_attention trains through the fused kernels") {
  if (!have_gpu()) return;
  const KernelsAlways kernels;
  loom::manual_seed(4);
  for (DType t : {DType::Float32, DType::Float16}) {
    CAPTURE(loom::name(t));
    const Tensor q0 = loom::randn({2, 4, 33, 64}).to(t), k0 = loom::randn({2, 4, 33, 64}).to(t),
                 v0 = loom::randn({2, 4, 33, 64}).to(t);
    auto grads = [&](bool on_gpu) {
      // The CPU side is the float64 reference (its float16 composite rounds
      // every intermediate, so it is no reference for the kernels' float sums).
      auto leaf = [&](const Tensor& x) {
        return (on_gpu ? x.to(gpu()) : x.to(DType::Float64)).detach().requires_grad_();
      };
      Tensor q = leaf(q0), k = leaf(k0), v = leaf(v0);
      Tensor y = loom::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
      (y * y).sum().backward();
      return std::make_tuple(y, q.grad(), k.grad(), v.grad());
    };
    const auto cpu = grads(false);
    loom::DispatchTrace trace;
    const auto cuda = grads(true);
    check_close(std::get<0>(cuda), std::get<0>(cpu), t, "output");
    check_close(std::get<1>(cuda), std::get<1>(cpu), t, "q.grad");
    check_close(std::get<2>(cuda), std::get<2>(cpu), t, "k.grad");
    check_close(std::get<3>(cuda), std::get<3>(cpu), t, "v.grad");
    CHECK(paths(trace, "_scaled_dot_product_attention_backward") == std::vector<std::string>{"kernel"});
    CHECK_FALSE(trace.fell_back_on(gpu().type));
  }
}

TEST_CASE("cuda attention by default: the composite while the scores fit, the kernels past 1/16 of memory") {
  if (!have_gpu()) return;
  loom::manual_seed(5);
  {
    const Tensor q = loom::randn({2, 3, 40, 16}).to(gpu());
    loom::DispatchTrace trace;
    const Tensor out = loom::scaled_dot_product_attention(q, q, q);
    CHECK(paths(trace, "_scaled_dot_product_attention_fused") == std::vector<std::string>{"composite"});
    const Tensor want = loom::scaled_dot_product_attention(q.cpu().to(DType::Float64), q.cpu().to(DType::Float64),
                                                           q.cpu().to(DType::Float64));
    check_close(out, want, DType::Float32, "output");
  }
  // 9 x 16384 x 16384 float32 scores: 9.7 GB, past 1/16 of an 80 or 141 GB GPU.
  const loom::autograd::NoGradGuard no_grad;
  const Tensor q = loom::randn({9, 16384, 16}).to(gpu());
  loom::DispatchTrace trace;
  const Tensor out = loom::scaled_dot_product_attention(q, q, q);
  CHECK(paths(trace, "_scaled_dot_product_attention_fused") == std::vector<std::string>{"kernel"});
  CHECK(out.sizes() == q.sizes());
  CHECK(loom::all(loom::isfinite(out)).cpu().item<bool>());
}

TEST_CASE("cuda option attention_kernels names its values") {
  if (!have_gpu()) return;
  CHECK_THROWS_WITH(loom::set_device_option("cuda", "attention_kernels", "sometimes"),
                    Catch::Contains("takes auto, always or never, got 'sometimes'"));
}
