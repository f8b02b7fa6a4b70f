// The CUDA cross_entropy kernels against the CPU plugin, through loom.
// Needs a GPU: without one every case says why and returns (the per-sample
// math is covered on the host by cross_entropy_ops_test.cu). Each case runs
// forward and _cross_entropy_backward on both devices, checks the cuda call
// ran the cuda kernel (no composite, no CPU fallback) and compares within
// the dtype's tolerance (the CPU runs its fused kernel for float32/float64
// and the composite for the 16-bit floats).
#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/library.h>
#include <loom/loom.h>

#include <cmath>
#include <string>
#include <vector>

using loom::DType;
using loom::Tensor;

namespace {

bool have_gpu() {
  (void)loom::device_type_slot("cuda");
  if (loom::device_count("cuda") > 0) return true;
  WARN("skipped: no CUDA device (" << loom::device_unavailable_reason("cuda") << ")");
  return false;
}

const loom::Device& gpu() {
  static const loom::Device dev("cuda:0");
  return dev;
}

double tol_of(DType dt) {
  switch (dt) {
    case DType::Float64: return 1e-12;
    case DType::Float32: return 2e-5;
    case DType::Float16: return 2e-3;
    default: return 1.6e-2;
  }
}

void check_close(const Tensor& cuda, const Tensor& cpu, DType dt) {
  REQUIRE(cuda.device() == gpu());
  REQUIRE(cuda.sizes() == cpu.sizes());
  REQUIRE(cuda.dtype() == cpu.dtype());
  const std::vector<double> g = cuda.cpu().to(DType::Float64).contiguous().to_vector<double>();
  const std::vector<double> w = cpu.to(DType::Float64).contiguous().to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << " cuda " << g[i] << " cpu " << w[i]);
    if (std::isnan(w[i])) CHECK(std::isnan(g[i]));
    else CHECK(std::fabs(g[i] - w[i]) <= tol_of(dt) * (1 + std::fabs(w[i])));
  }
}

// Runs f on cuda under a trace; `op` must have run as the cuda kernel.
template <class F>
Tensor on_cuda_kernel(const char* op, F f) {
  loom::DispatchTrace trace;
  Tensor r = f();
  bool native = false;
  for (const auto& e : trace.events())
    if (e.depth == 0 && e.op->name() == op) native = e.path == loom::DispatchPath::Kernel;
  INFO("op " << op);
  CHECK(native);
  CHECK_FALSE(trace.fell_back_on(gpu().type));
  return r;
}

Tensor targets(const std::vector<int64_t>& shape, int64_t C, int64_t seed) {
  std::vector<int64_t> v(static_cast<size_t>(loom::shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (static_cast<int64_t>(i) * 7 + seed) % C;
  return loom::from_vector<int64_t>(v, shape);
}

struct Shape {
  std::vector<int64_t> input, target;
};

}  // namespace

TEST_CASE("cuda cross_entropy and its backward match the CPU: every dtype, layout and option") {
  if (!have_gpu()) return;
  loom::manual_seed(21);
  // Thread-, warp- and block-per-sample launches: short rows with many
  // samples, mid rows, rows past kWarpRowMax; spatial (strided samples),
  // many strided samples (thread per sample), 1-d.
  const std::vector<Shape> shapes{{{8192, 10}, {8192}}, {{37, 300}, {37}}, {{5, 5000}, {5}},
                                  {{2, 7, 3, 5}, {2, 3, 5}}, {{4, 3, 1024}, {4, 1024}}, {{33}, {}}};
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    for (const Shape& s : shapes) {
      const int64_t C = s.input.size() == 1 ? s.input[0] : s.input[1];
      const Tensor x = (loom::randn(s.input) * 3.0).to(dt);
      const Tensor t = targets(s.target, C, 3);
      const Tensor w = (loom::rand({C}) + 0.5).to(dt);
      for (const char* reduction : {"none", "mean", "sum"}) {
        const Tensor g =
            loom::randn(std::string(reduction) == "none" ? s.target : std::vector<int64_t>{}).to(dt);
        for (bool weighted : {false, true}) {
          for (int64_t ignore : {int64_t{-100}, int64_t{1}}) {
            for (double ls : {0.0, 0.2}) {
              INFO(loom::name(dt) << " input " << loom::shape_str(s.input) << " " << reduction
                                  << (weighted ? " weighted" : "") << " ignore_index " << ignore << " ls " << ls);
              const Tensor wt = weighted ? w : Tensor();
              const Tensor wg = weighted ? w.to(gpu()) : Tensor();
              check_close(on_cuda_kernel("cross_entropy",
                                         [&] {
                                           return loom::cross_entropy(x.to(gpu()), t.to(gpu()), wg, ignore,
                                                                      reduction, ls);
                                         }),
                          loom::cross_entropy(x, t, wt, ignore, reduction, ls), dt);
              check_close(on_cuda_kernel("_cross_entropy_backward",
                                         [&] {
                                           return loom::cross_entropy_backward(g.to(gpu()), x.to(gpu()),
                                                                               t.to(gpu()), wg, ignore, reduction, ls);
                                         }),
                          loom::cross_entropy_backward(g, x, t, wt, ignore, reduction, ls), dt);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("cuda cross_entropy: autograd, empty batches, ignored batches, probability targets") {
  if (!have_gpu()) return;
  loom::manual_seed(22);
  const Tensor x = loom::randn({64, 10});
  const Tensor t = targets({64}, 10, 1);
  const Tensor xc = x.clone().requires_grad_(), xg = x.to(gpu()).requires_grad_();
  loom::cross_entropy(xc, t, {}, -100, "mean", 0.1).backward();
  loom::cross_entropy(xg, t.to(gpu()), {}, -100, "mean", 0.1).backward();
  check_close(xg.grad(), xc.grad(), DType::Float32);

  // Every target ignored: mean is 0/0 = NaN, the gradient 0.
  const Tensor ignored = loom::full({64}, 3, DType::Int64);
  check_close(loom::cross_entropy(x.to(gpu()), ignored.to(gpu()), {}, 3), loom::cross_entropy(x, ignored, {}, 3),
              DType::Float32);
  check_close(loom::cross_entropy_backward(loom::ones({}).to(gpu()), x.to(gpu()), ignored.to(gpu()), {}, 3),
              loom::cross_entropy_backward(loom::ones({}), x, ignored, {}, 3), DType::Float32);
  // An empty batch: sum 0, mean NaN.
  const Tensor e = loom::zeros({0, 5});
  const Tensor et = loom::zeros({0}, DType::Int64);
  for (const char* r : {"sum", "mean"})
    check_close(loom::cross_entropy(e.to(gpu()), et.to(gpu()), {}, -100, r), loom::cross_entropy(e, et, {}, -100, r),
                DType::Float32);
  // Probability targets: declined by the kernel, the composite runs on the device.
  const Tensor q = loom::softmax(loom::randn({64, 10}), 1);
  const uint64_t before = loom::fallback_count("cross_entropy", "cuda");
  check_close(loom::cross_entropy(x.to(gpu()), q.to(gpu())), loom::cross_entropy(x, q), DType::Float32);
  CHECK(loom::fallback_count("cross_entropy", "cuda") == before);
}

TEST_CASE("cuda cross_entropy reports an out-of-range target as the CPU does") {
  if (!have_gpu()) return;
  const Tensor x = loom::randn({4, 5}).to(gpu());
  const Tensor bad = loom::from_vector<int64_t>({0, 5, -1, 2}, {4}).to(gpu());
  CHECK_THROWS_WITH(loom::cross_entropy(x, bad),
                    Catch::Contains("cross_entropy: target 5 is out of bounds for 5 classes (at flat index 1 of the "
                                    "target; ignore_index is -100)"));
  CHECK_THROWS_WITH(loom::cross_entropy_backward(loom::ones({}).to(gpu()), x, bad, {}, 5),
                    Catch::Contains("_cross_entropy_backward: target -1 is out of bounds for 5 classes (at flat "
                                    "index 2 of the target; ignore_index is 5)"));
  // The device is still usable afterwards.
  CHECK(std::isfinite(loom::cross_entropy(x, loom::from_vector<int64_t>({0, 1, 2, 3}, {4}).to(gpu())).cpu().item<float>()));
}
