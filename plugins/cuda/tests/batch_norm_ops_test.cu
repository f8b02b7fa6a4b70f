// batch_norm on CUDA, host side: how kernels/batch_norm_plan.hpp maps inputs
// onto cuDNN's tensors and when it declines, which per-channel operands are
// used in place, how the evaluation-mode backward splits channels into
// chunks; and that backward's whole two-pass algorithm
// (kernels/batch_norm_ops.cuh), run here block by block and thread by
// thread as the kernels do, against a naive float64 reference. Built by
// nvcc as a host program; needs neither a GPU nor cuDNN.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/batch_norm_ops.cuh"
#include "kernels/batch_norm_plan.hpp"

#include <loom/plugin.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace loom::cuda;

namespace {

bn::Problem problem(std::vector<int64_t> shape) {
  return bn::problem_of(static_cast<int32_t>(shape.size()), shape.data());
}

LoomTensorDesc desc(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  LoomTensorDesc d{};
  d.struct_size = sizeof d;
  d.ndim = static_cast<int32_t>(shape.size());
  d.shape = shape.data();
  d.strides = strides.data();
  return d;
}

// Deterministic values in [lo, hi).
struct Lcg {
  uint64_t state;
  double next(double lo, double hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * static_cast<double>(state >> 11) * 0x1.0p-53;
  }
};

}  // namespace

TEST_CASE("inputs map onto cuDNN's 4-D or 5-D NCHW tensor", "[batch_norm]") {
  const bn::Problem p2 = problem({8, 3});
  CHECK(p2.nb_dims == 4);
  CHECK(std::vector<int64_t>(p2.dims, p2.dims + 4) == std::vector<int64_t>{8, 3, 1, 1});
  CHECK(p2.S == 1);
  const bn::Problem p3 = problem({8, 3, 10});
  CHECK(std::vector<int64_t>(p3.dims, p3.dims + 4) == std::vector<int64_t>{8, 3, 10, 1});
  CHECK(std::vector<int64_t>(p3.strides, p3.strides + 4) == std::vector<int64_t>{30, 10, 1, 1});
  const bn::Problem p4 = problem({2, 3, 4, 5});
  CHECK(p4.nb_dims == 4);
  CHECK(std::vector<int64_t>(p4.strides, p4.strides + 4) == std::vector<int64_t>{60, 20, 5, 1});
  CHECK(p4.S == 20);
  const bn::Problem p5 = problem({2, 3, 4, 5, 6});
  CHECK(p5.nb_dims == 5);
  CHECK(std::vector<int64_t>(p5.dims, p5.dims + 5) == std::vector<int64_t>{2, 3, 4, 5, 6});
  CHECK(std::vector<int64_t>(p5.strides, p5.strides + 5) == std::vector<int64_t>{360, 120, 30, 6, 1});
  // Past 5-D the trailing spatial dims merge: the same elements per channel.
  const bn::Problem p7 = problem({2, 3, 4, 5, 6, 7, 2});
  CHECK(p7.nb_dims == 5);
  CHECK(std::vector<int64_t>(p7.dims, p7.dims + 5) == std::vector<int64_t>{2, 3, 4, 5, 84});
  CHECK(p7.S == 4 * 5 * 84);
  CHECK(p7.numel() == 2 * 3 * 4 * 5 * 84);
}

TEST_CASE("cuDNN is declined for eps below its minimum, sizes past int, one value per channel", "[batch_norm]") {
  const bn::Problem p = problem({4, 3, 5});
  CHECK(bn::decline_reason(p, 1e-5, 0.0, true) == nullptr);
  CHECK(bn::decline_reason(p, 0.0, 0.0, false) == nullptr);
  CHECK(std::string(bn::decline_reason(p, -1e-5, 0.0, true)) == "eps is below cuDNN's minimum");
  CHECK(bn::decline_reason(p, 1e-6, 1e-5, true) != nullptr);  // an older cuDNN's CUDNN_BN_MIN_EPSILON
  CHECK(bn::decline_reason(p, NAN, 0.0, true) != nullptr);
  CHECK(bn::decline_reason(problem({2, 1 << 16, 1 << 14}), 1e-5, 0.0, false) != nullptr);  // 2^31 elements
  CHECK(bn::decline_reason(problem({2, 1 << 16, (1 << 14) - 1}), 1e-5, 0.0, false) == nullptr);
  CHECK(bn::decline_reason(problem({1, 3}), 1e-5, 0.0, true) != nullptr);
  CHECK(bn::decline_reason(problem({1, 3}), 1e-5, 0.0, false) == nullptr);  // evaluation mode takes it
  CHECK(bn::decline_reason(problem({1, 3, 2}), 1e-5, 0.0, true) == nullptr);
  CHECK(bn::decline_reason(problem({0, 3, 2}), 1e-5, 0.0, true) == nullptr);  // empty: nothing to run
}

TEST_CASE("per-channel operands are used in place when dense, written only without broadcast dims", "[batch_norm]") {
  const std::vector<int64_t> c5{5}, s1{1}, s2{2}, s0{0};
  CHECK(loom::plugin::is_contiguous(desc(c5, s1)));
  CHECK_FALSE(loom::plugin::is_contiguous(desc(c5, s2)));
  const std::vector<int64_t> one_c_one{1, 5, 1}, odd{7, 1, 3};
  CHECK(loom::plugin::is_contiguous(desc(one_c_one, odd)));  // size-1 dims' strides do not matter
  const std::vector<int64_t> two_three{2, 3}, transposed{1, 2}, row_major{3, 1};
  CHECK(loom::plugin::is_contiguous(desc(two_three, row_major)));
  CHECK_FALSE(loom::plugin::is_contiguous(desc(two_three, transposed)));
  const std::vector<int64_t> c1{1};
  CHECK(loom::plugin::is_contiguous(desc(c1, s0)));
  CHECK(bn::is_writable(desc(c5, s2)));
  CHECK_FALSE(bn::is_writable(desc(c5, s0)));
  CHECK(bn::is_writable(desc(c1, s0)));  // one element, written once
}

TEST_CASE("the evaluation-mode backward cuts channels into chunks that cover them once", "[batch_norm]") {
  for (const int64_t C : {1, 3, 64, 5000})
    for (const int64_t M : {1, 7, 4096, 4097, 100000, 3000000}) {
      CAPTURE(C, M);
      const bn::Split s = bn::eval_backward_split(C, M, 1024, 4096);
      REQUIRE(s.per_channel >= 1);
      CHECK(s.chunk * s.per_channel >= M);           // every element in a chunk
      CHECK(s.chunk * (s.per_channel - 1) < M);      // no empty chunk
      CHECK((s.per_channel == 1 || s.chunk >= 4096 / 2));
      CHECK(C * s.per_channel <= std::max<int64_t>(C, 1024 + C));
    }
  CHECK(bn::eval_backward_split(1, 3000000, 1024, 4096).per_channel > 500);  // one channel still fills the GPU
  CHECK(bn::eval_backward_split(5000, 3000000, 1024, 4096).per_channel == 1);
  CHECK(bn::eval_backward_split(0, 10, 1024, 4096).per_channel == 1);
}

namespace {

// The kernels' work on the host: pass 1 block by block (256 threads each,
// their sums merged), pass 2 per channel. x, g are [N, C, S]; the
// parameters float (as staged for every input dtype but float64: exact in
// double too); the sums come back in the accumulation type, widened.
template <class T>
void eval_backward_on_host(const std::vector<T>& g, const std::vector<T>& x, std::vector<T>& dx,
                           const std::vector<float>& w, const std::vector<float>& mean, const std::vector<float>& var,
                           double eps, int64_t N, int64_t C, int64_t S, std::vector<double>& gw,
                           std::vector<double>& gb) {
  using A = opmath_t<T>;
  const int64_t M = N * S;
  const bn::Split split = bn::eval_backward_split(C, M, 16, 64);  // small, so channels do split here
  std::vector<bn::ChannelSums<A>> parts(static_cast<size_t>(C * split.per_channel));
  for (int64_t blk = 0; blk < C * split.per_channel; ++blk) {
    const int64_t ch = blk / split.per_channel, begin = (blk % split.per_channel) * split.chunk;
    const int64_t end = std::min(begin + split.chunk, M);
    const auto k = bn::eval_channel<A>(w.empty() ? 1.0f : w[ch], mean[ch], var[ch], eps);
    bn::ChannelSums<A> s;
    for (int t = 0; t < 256; ++t) s.combine(bn::eval_backward_range(g.data(), x.data(), dx.data(), ch, C, S, begin + t, end, 256, k));
    parts[static_cast<size_t>(blk)] = s;
  }
  for (int64_t ch = 0; ch < C; ++ch) {
    const auto s = bn::sum_parts(parts.data() + ch * split.per_channel, split.per_channel);
    gw[ch] = static_cast<double>(s.gx);
    gb[ch] = static_cast<double>(s.g);
  }
}

template <class T>
void check_eval_backward(int64_t N, int64_t C, int64_t S, bool weight, double tol) {
  CAPTURE(N, C, S, weight);
  Lcg rng{static_cast<uint64_t>(N * 131 + C * 17 + S)};
  const int64_t n = N * C * S;
  std::vector<T> g(n), x(n), dx(n);
  std::vector<double> gd(n), xd(n);
  for (int64_t i = 0; i < n; ++i) {
    g[i] = narrow<T>(static_cast<opmath_t<T>>(rng.next(-1, 1)));
    x[i] = narrow<T>(static_cast<opmath_t<T>>(rng.next(-3, 3)));
    gd[i] = static_cast<double>(widen(g[i]));
    xd[i] = static_cast<double>(widen(x[i]));
  }
  std::vector<float> w, mean(C), var(C);
  std::vector<double> gw(C), gb(C);
  for (int64_t c = 0; c < C; ++c) {
    if (weight) w.push_back(static_cast<float>(rng.next(-2, 2)));
    mean[c] = static_cast<float>(rng.next(-1, 1));
    var[c] = static_cast<float>(rng.next(0.5, 2));
  }
  const double eps = 1e-3;
  eval_backward_on_host(g, x, dx, w, mean, var, eps, N, C, S, gw, gb);
  double worst_dx = 0;
  for (int64_t c = 0; c < C; ++c) {
    const double rstd = 1 / std::sqrt(static_cast<double>(var[c]) + eps), wc = weight ? w[c] : 1.0;
    double sg = 0, sgx = 0;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t o = (i * C + c) * S + s;
        sg += gd[o];
        sgx += gd[o] * (xd[o] - mean[c]) * rstd;
        worst_dx = std::max(worst_dx, std::abs(static_cast<double>(widen(dx[o])) - gd[o] * wc * rstd));
      }
    CHECK(std::abs(gb[c] - sg) <= tol * (1 + std::abs(sg)));
    CHECK(std::abs(gw[c] - sgx) <= tol * (1 + std::abs(sgx)));
  }
  CHECK(worst_dx <= tol * 4);
}

}  // namespace

TEST_CASE("evaluation-mode backward, block by block, matches a float64 reference", "[batch_norm]") {
  check_eval_backward<float>(4, 3, 50, true, 1e-5);
  check_eval_backward<float>(64, 2, 33, false, 1e-5);  // several chunks per channel, a short last one
  check_eval_backward<double>(16, 5, 9, true, 1e-12);
  check_eval_backward<double>(3, 1, 1, true, 1e-12);   // fewer elements than threads
  check_eval_backward<float>(3, 2, 700, true, 1e-5);    // rows longer than the threads' step
  check_eval_backward<float>(5, 2, 256, false, 1e-5);   // rows exactly one step long
  check_eval_backward<float>(7, 3, 255, true, 1e-5);    // a carry into the next row on most steps
  check_eval_backward<__half>(8, 3, 40, true, 2e-3);   // grad_input rounds to half; sums stay float
  check_eval_backward<__nv_bfloat16>(8, 3, 40, false, 1e-2);
}
