// batch_norm and _batch_norm_backward on CUDA (cuDNN, and the own
// evaluation-mode backward kernels) against the CPU, through loom: outputs,
// the running statistics updated in place (in their own dtype and layout),
// and the gradients, for 2-D to 5-D inputs and every floating dtype; which
// path each call took (the cuda kernel, or the composite where it must
// decline). Needs a GPU: without one every case says why and returns (the
// host math is covered by batch_norm_ops_test.cu). Built only with cuDNN.
#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/loom.h>

#include "device_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using loom::DType;
using loom::Tensor;

namespace {

using loom_cuda_test::gpu;
using loom_cuda_test::have_gpu;
using loom_cuda_test::on_gpu;

// Largest |a - b| / (1 + |b|), both read as float64 on the CPU.
double max_rel_diff(const Tensor& got, const Tensor& want) {
  REQUIRE(got.sizes() == want.sizes());
  REQUIRE(got.dtype() == want.dtype());
  const auto a = got.cpu().to(DType::Float64).contiguous().to_vector<double>();
  const auto b = want.to(DType::Float64).contiguous().to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / (1 + std::abs(b[i])));
  return worst;
}

double tolerance(DType t) {
  switch (t) {
    case DType::Float64: return 1e-10;
    case DType::Float32: return 1e-4;
    case DType::Float16: return 1e-2;
    default: return 5e-2;  // bfloat16
  }
}

// The paths `op` took on cuda within `trace`.
std::vector<std::string> cuda_paths(const loom::DispatchTrace& trace, const std::string& op) {
  const int slot = loom::device_type_slot("cuda");
  std::vector<std::string> r;
  for (const auto& e : trace.events())
    if (e.op && e.op->name() == op && e.device_type == slot && e.depth == 0) r.push_back(loom::to_string(e.path));
  return r;
}

// cuDNN runs float32, float64 and float16; bfloat16 where this cuDNN takes
// it (else the composite, which is then checked all the same).
void check_native(const loom::DispatchTrace& trace, const std::string& op, DType t) {
  const auto paths = cuda_paths(trace, op);
  REQUIRE_FALSE(paths.empty());
  if (t == DType::BFloat16 && paths.front() != "kernel") {
    WARN(op << " on bfloat16 declined by cuDNN: ran the composite");
    return;
  }
  CHECK(paths.front() == "kernel");
}

struct Case {
  std::vector<int64_t> shape;
  bool weight, bias, stats;
};
const Case kCases[] = {
    {{16, 5}, true, true, true},           // 2-D
    {{4, 3, 7}, false, false, true},       // 3-D, no affine
    {{2, 4, 6, 5}, true, false, false},    // 4-D, weight only, no running stats
    {{2, 3, 4, 3, 2}, false, true, true},  // 5-D, bias only
    {{3, 2, 2, 2, 2, 3}, true, true, true},  // 6-D: trailing dims merge
};

}  // namespace

TEST_CASE("cuda batch_norm in training matches the CPU, running statistics included") {
  if (!have_gpu()) return;
  loom::manual_seed(21);
  for (const DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    for (const Case& k : kCases) {
      CAPTURE(loom::name(t), k.shape, k.weight, k.bias, k.stats);
      const int64_t C = k.shape[1];
      const Tensor x = (loom::randn(k.shape) * 2 + 0.5).to(t);
      const Tensor w = k.weight ? loom::randn({C}).to(t) : Tensor(), b = k.bias ? loom::randn({C}).to(t) : Tensor();
      Tensor rm = k.stats ? loom::randn({C}) : Tensor(), rv = k.stats ? loom::rand({C}) + 0.5 : Tensor();
      Tensor rm_gpu = on_gpu(rm), rv_gpu = on_gpu(rv);
      loom::DispatchTrace trace;
      const Tensor y = loom::batch_norm(on_gpu(x), rm_gpu, rv_gpu, on_gpu(w), on_gpu(b), true, 0.3, 1e-4);
      check_native(trace, "batch_norm", t);
      const Tensor want = loom::batch_norm(x, rm, rv, w, b, true, 0.3, 1e-4);
      CHECK(max_rel_diff(y, want) < tolerance(t));
      if (k.stats) {
        CHECK(max_rel_diff(rm_gpu, rm) < 1e-4);  // float32 statistics, blended by both
        CHECK(max_rel_diff(rv_gpu, rv) < 1e-4);  // the unbiased variance
      }
    }
  }
}

TEST_CASE("cuda batch_norm writes running statistics of another dtype and layout in place") {
  if (!have_gpu()) return;
  loom::manual_seed(4);
  const Tensor x = loom::randn({8, 3, 5});
  // float64 statistics for a float32 input, and strided float16 ones (every
  // other element of a buffer): both staged and written back.
  Tensor rm64 = loom::randn({3}, DType::Float64), rv64 = loom::rand({3}, DType::Float64) + 0.5;
  const Tensor buf_m = loom::randn({6}).to(DType::Float16), buf_v = (loom::rand({6}) + 0.5).to(DType::Float16);
  Tensor gm = on_gpu(buf_m), gv = on_gpu(buf_v);
  Tensor rm16 = gm.view({3, 2}).select(1, 0), rv16 = gv.view({3, 2}).select(1, 1);
  Tensor cm = buf_m.clone(), cv = buf_v.clone();
  Tensor cm16 = cm.view({3, 2}).select(1, 0), cv16 = cv.view({3, 2}).select(1, 1);
  Tensor g64m = on_gpu(rm64), g64v = on_gpu(rv64);
  loom::DispatchTrace trace;
  (void)loom::batch_norm(on_gpu(x), g64m, g64v, {}, {}, true, 0.1);
  (void)loom::batch_norm(on_gpu(x), rm16, rv16, {}, {}, true, 0.1);
  CHECK(cuda_paths(trace, "batch_norm") == std::vector<std::string>{"kernel", "kernel"});
  (void)loom::batch_norm(x, rm64, rv64, {}, {}, true, 0.1);
  (void)loom::batch_norm(x, cm16, cv16, {}, {}, true, 0.1);
  CHECK(max_rel_diff(g64m, rm64) < 1e-6);
  CHECK(max_rel_diff(g64v, rv64) < 1e-6);
  CHECK(max_rel_diff(gm, cm) < 2e-3);  // the untouched elements too
  CHECK(max_rel_diff(gv, cv) < 2e-3);
  // Only one of the two: cuDNN gets a scratch for the other.
  Tensor only = on_gpu(loom::zeros({3}));
  Tensor only_cpu = loom::zeros({3});
  (void)loom::batch_norm(on_gpu(x), only, {}, {}, {}, true, 0.5);
  (void)loom::batch_norm(x, only_cpu, {}, {}, {}, true, 0.5);
  CHECK(max_rel_diff(only, only_cpu) < 1e-5);
}

TEST_CASE("cuda batch_norm in evaluation mode and on a strided input matches the CPU") {
  if (!have_gpu()) return;
  loom::manual_seed(9);
  for (const DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    for (const Case& k : kCases) {
      CAPTURE(loom::name(t), k.shape);
      const int64_t C = k.shape[1];
      const Tensor x = loom::randn(k.shape).to(t);
      const Tensor w = k.weight ? loom::randn({C}).to(t) : Tensor(), b = k.bias ? loom::randn({C}).to(t) : Tensor();
      const Tensor rm = loom::randn({C}), rv = loom::rand({C}) + 0.5;
      loom::DispatchTrace trace;
      const Tensor y = loom::batch_norm(on_gpu(x), on_gpu(rm), on_gpu(rv), on_gpu(w), on_gpu(b), false, 0.1, 1e-3);
      check_native(trace, "batch_norm", t);
      CHECK(max_rel_diff(y, loom::batch_norm(x, rm, rv, w, b, false, 0.1, 1e-3)) < tolerance(t));
    }
  }
  // A transposed input: copied to a packed block, then cuDNN.
  const Tensor x = loom::randn({5, 4, 6}).transpose(0, 2);  // [6, 4, 5], strided
  loom::DispatchTrace trace;
  const Tensor y = loom::batch_norm(on_gpu(x), {}, {}, {}, {}, true);
  CHECK(cuda_paths(trace, "batch_norm") == std::vector<std::string>{"kernel"});
  CHECK(max_rel_diff(y, loom::batch_norm(x, {}, {}, {}, {}, true)) < 1e-4);
}

TEST_CASE("cuda batch_norm declines a negative eps to the composite") {
  if (!have_gpu()) return;
  const Tensor x = loom::randn({6, 3, 4}), rm = loom::zeros({3}), rv = loom::ones({3});
  loom::DispatchTrace trace;
  const Tensor y = loom::batch_norm(on_gpu(x), on_gpu(rm), on_gpu(rv), {}, {}, false, 0.1, -1e-6);
  CHECK(cuda_paths(trace, "batch_norm") == std::vector<std::string>{"composite"});
  CHECK(max_rel_diff(y, loom::batch_norm(x, rm, rv, {}, {}, false, 0.1, -1e-6)) < 1e-5);
}

TEST_CASE("cuda batch_norm gradients match the CPU in training and evaluation mode") {
  if (!have_gpu()) return;
  loom::manual_seed(13);
  for (const DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    for (const bool training : {true, false}) {
      for (const Case& k : kCases) {
        CAPTURE(loom::name(t), training, k.shape, k.weight);
        const int64_t C = k.shape[1];
        const Tensor x0 = loom::randn(k.shape).to(t), w0 = loom::randn({C}).to(t), b0 = loom::randn({C}).to(t);
        const Tensor rm = loom::randn({C}), rv = loom::rand({C}) + 0.5;
        const Tensor dy = loom::randn(k.shape).to(t);
        auto grads = [&](bool cuda) {
          auto place = [cuda](const Tensor& v) { return cuda ? on_gpu(v) : v; };
          Tensor x = place(x0).requires_grad_(), w = place(w0).requires_grad_(), b = place(b0).requires_grad_();
          const Tensor y = loom::batch_norm(x, training ? Tensor() : place(rm), training ? Tensor() : place(rv),
                                            k.weight ? w : Tensor(), b, training, 0.1, 1e-3);
          return loom::autograd::grad({y}, {x, w, b}, {place(dy)}, std::nullopt, false, true);
        };
        loom::DispatchTrace trace;
        const auto got = grads(true);
        check_native(trace, "_batch_norm_backward", t);
        const auto want = grads(false);
        // float16 / bfloat16 gradients are sums of many rounded terms.
        const double tol = t == DType::Float64 ? 1e-9 : t == DType::Float32 ? 1e-4 : t == DType::Float16 ? 2e-2 : 1e-1;
        CHECK(max_rel_diff(got[0], want[0]) < tol);
        if (k.weight) CHECK(max_rel_diff(got[1], want[1]) < tol);
        CHECK(max_rel_diff(got[2], want[2]) < tol);
      }
    }
  }
}

TEST_CASE("cuda _batch_norm_backward in evaluation mode: long channels, empty batch") {
  if (!have_gpu()) return;
  loom::manual_seed(17);
  // Two channels of 64·4096 elements: split into many chunks per channel.
  const Tensor g = loom::randn({64, 2, 4096}), x = loom::randn({64, 2, 4096}), w = loom::randn({2});
  const Tensor rm = loom::randn({2}), rv = loom::rand({2}) + 0.5;
  loom::DispatchTrace trace;
  const auto got = loom::batch_norm_backward(on_gpu(g), on_gpu(x), on_gpu(w), on_gpu(rm), on_gpu(rv), false, 1e-5);
  CHECK(cuda_paths(trace, "_batch_norm_backward") == std::vector<std::string>{"kernel"});
  const auto want = loom::batch_norm_backward(g.to(DType::Float64), x.to(DType::Float64), w.to(DType::Float64),
                                              rm, rv, false, 1e-5);
  CHECK(max_rel_diff(std::get<0>(got).to(DType::Float64), std::get<0>(want)) < 1e-5);
  CHECK(max_rel_diff(std::get<1>(got).to(DType::Float64), std::get<1>(want)) < 1e-4);
  CHECK(max_rel_diff(std::get<2>(got).to(DType::Float64), std::get<2>(want)) < 1e-4);
  // No samples: zero weight and bias gradients.
  const auto empty = loom::batch_norm_backward(on_gpu(loom::ones({0, 3})), on_gpu(loom::ones({0, 3})), {},
                                               on_gpu(loom::zeros({3})), on_gpu(loom::ones({3})), false);
  CHECK(std::get<1>(empty).cpu().to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(std::get<2>(empty).cpu().to_vector<float>() == std::vector<float>{0, 0, 0});
}
