// Host tests of kernels/cross_entropy_ops.cuh: a sample's loss and gradient
// computed as the kernels compute them (lanes folding interleaved logits,
// merged in the warp and block order), for one thread, a warp and a block,
// against plain long-double loops of PyTorch's definition; the gradient
// against central differences of that loss; the whole-call sums (the one
// block of reduce_kernel) and the target classification. Built with nvcc as
// a host program: no GPU needed.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/cross_entropy_ops.cuh"

#include <cmath>
#include <limits>
#include <vector>

using namespace loom::cuda;
using xent::Smoothing;

namespace {

using LD = long double;

struct Row {
  std::vector<double> x, w;  // logits, class weights (all 1 when unweighted)
  int64_t t;
};

Row make_row(int64_t classes, int seed, bool weighted, double scale) {
  Row r{{}, {}, (seed * 7 + 3) % classes};
  for (int64_t i = 0; i < classes; ++i) {
    r.x.push_back(scale * std::sin(0.37 * static_cast<double>(i + 1) * (seed + 1)) + 0.01 * static_cast<double>(i % 5));
    r.w.push_back(weighted ? 0.3 + static_cast<double>((i * 5 + seed) % 9) / 4 : 1.0);
  }
  return r;
}

// PyTorch's per-sample loss, straight from the definition.
LD ref_loss(const Row& r, double ls) {
  const int64_t C = static_cast<int64_t>(r.x.size());
  LD m = -INFINITY, s = 0, smooth = 0;
  for (double v : r.x) m = std::max<LD>(m, v);
  for (double v : r.x) s += std::exp(static_cast<LD>(v) - m);
  const LD lse = m + std::log(s);
  for (int64_t c = 0; c < C; ++c) smooth += r.w[c] * (lse - r.x[c]);
  return (1 - ls) * r.w[r.t] * (lse - r.x[r.t]) + ls / C * smooth;
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

template <class C>
C kernel_loss(const Row& r, double ls, int lanes) {
  const int64_t n = static_cast<int64_t>(r.x.size());
  const auto k = xent::narrow_smoothing<C>(xent::smoothing(ls, n, sum_of(r.w)));
  return xent::lanes_loss<C>(n, r.t, lanes, k, [&](int64_t i) { return static_cast<C>(r.x[i]); },
                             [&](int64_t i) { return static_cast<C>(r.w[i]); });
}

template <class C>
std::vector<C> kernel_grad(const Row& r, double ls, int lanes, double g) {
  const int64_t n = static_cast<int64_t>(r.x.size());
  const auto k = xent::narrow_smoothing<C>(xent::smoothing(ls, n, sum_of(r.w)));
  return xent::lanes_grad<C>(n, r.t, lanes, static_cast<C>(g), k, [&](int64_t i) { return static_cast<C>(r.x[i]); },
                             [&](int64_t i) { return static_cast<C>(r.w[i]); });
}

}  // namespace

TEST_CASE("cross_entropy ops: targets are counted, ignored or out of range") {
  CHECK(xent::classify(0, 4, -100) == xent::Target::Counted);
  CHECK(xent::classify(3, 4, -100) == xent::Target::Counted);
  CHECK(xent::classify(4, 4, -100) == xent::Target::OutOfRange);
  CHECK(xent::classify(-1, 4, -100) == xent::Target::OutOfRange);
  CHECK(xent::classify(-100, 4, -100) == xent::Target::Ignored);
  CHECK(xent::classify(2, 4, 2) == xent::Target::Ignored);  // ignore_index may be a valid class
  CHECK(xent::classify(7, 4, 7) == xent::Target::Ignored);
}

TEST_CASE("cross_entropy ops: a sample's loss from a thread, a warp and a block matches the definition") {
  int seed = 0;
  for (int64_t classes : {1, 2, 5, 31, 33, 257, 1000, 5000}) {
    for (bool weighted : {false, true}) {
      for (double ls : {0.0, 0.1, 1.0}) {
        for (double scale : {1.0, 30.0}) {
          const Row r = make_row(classes, ++seed, weighted, scale);
          const LD want = ref_loss(r, ls);
          for (int lanes : {1, 32, 256}) {
            INFO("classes " << classes << " weighted " << weighted << " ls " << ls << " scale " << scale << " lanes "
                            << lanes << " want " << static_cast<double>(want));
            CHECK(std::fabs(kernel_loss<double>(r, ls, lanes) - want) <= 1e-12 * (1 + std::fabs(want)));
            CHECK(std::fabs(kernel_loss<float>(r, ls, lanes) - want) <= 2e-6 * (1 + std::fabs(want)) * std::log2(classes + 1.0));
          }
        }
      }
    }
  }
}

TEST_CASE("cross_entropy ops: large logits lose nothing to cancellation") {
  // x ≈ 1e4 in float: S_w·m - Σ w x would lose ~1e-3 of the smoothing sum;
  // Σ w (m - x) keeps it to rounding.
  Row r = make_row(1000, 3, true, 1.0);
  for (double& v : r.x) v += 1e4;
  const LD want = ref_loss(r, 0.3);
  CHECK(std::fabs(kernel_loss<float>(r, 0.3, 32) - want) <= 2e-5 * std::fabs(want));
}

TEST_CASE("cross_entropy ops: infinite and NaN logits behave as the composite") {
  Row r = make_row(6, 1, false, 1.0);
  r.x[(r.t + 1) % 6] = -INFINITY;  // a masked class: loss finite, smoothing infinite
  CHECK(std::isfinite(kernel_loss<float>(r, 0.0, 32)));
  CHECK(std::isinf(kernel_loss<float>(r, 0.2, 32)));
  CHECK(std::fabs(kernel_grad<float>(r, 0.2, 32, 1.0)[(r.t + 1) % 6] + 0.2 / 6) < 1e-8);  // p = 0 there: -b w
  r.x[r.t] = -INFINITY;  // the target itself masked: infinite loss
  CHECK(kernel_loss<double>(r, 0.0, 1) == INFINITY);
  Row all = make_row(4, 2, false, 1.0);
  for (double& v : all.x) v = -INFINITY;
  CHECK(std::isnan(kernel_loss<float>(all, 0.0, 32)));  // log_softmax of an all -inf row is NaN
  Row nan = make_row(40, 2, false, 1.0);
  nan.x[17] = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(kernel_loss<float>(nan, 0.0, 32)));
  for (float v : kernel_grad<float>(nan, 0.0, 32, 1.0)) CHECK(std::isnan(v));
}

TEST_CASE("cross_entropy ops: a sample's gradient matches central differences of its loss") {
  int seed = 100;
  for (int64_t classes : {1, 3, 33, 300}) {
    for (bool weighted : {false, true}) {
      for (double ls : {0.0, 0.25}) {
        const Row r = make_row(classes, ++seed, weighted, 2.0);
        const double g = 0.7;
        const std::vector<double> d = kernel_grad<double>(r, ls, 32, g);
        for (int64_t c = 0; c < classes; c += std::max<int64_t>(1, classes / 17)) {
          Row hi = r, lo = r;
          const double h = 1e-5;
          hi.x[c] += h;
          lo.x[c] -= h;
          const double want = g * static_cast<double>(ref_loss(hi, ls) - ref_loss(lo, ls)) / (2 * h);
          INFO("classes " << classes << " weighted " << weighted << " ls " << ls << " class " << c);
          CHECK(std::fabs(d[c] - want) <= 1e-7 * (1 + std::fabs(want)));
          for (int lanes : {1, 256}) CHECK(std::fabs(kernel_grad<float>(r, ls, lanes, g)[c] - d[c]) <= 2e-6);
        }
      }
    }
  }
}

TEST_CASE("cross_entropy ops: the whole-call sums ('sum', 'mean', 0/0)") {
  std::vector<double> loss, weight;
  for (int i = 0; i < 10000; ++i) {
    loss.push_back(1.0 + 1e-3 * (i % 97));
    weight.push_back(i % 3 == 0 ? 0.0 : 0.5 + (i % 5));
  }
  long double want_l = 0, want_w = 0;
  for (size_t i = 0; i < loss.size(); ++i) {
    want_l += loss[i];
    want_w += weight[i];
  }
  // reduce_kernel: one block, thread j adding j, j + 256, ..., then merge_row.
  auto block = [&](int64_t n) {
    return xent::fold_lanes<xent::LossSum>(n, 256, [&](auto& s, int64_t i) { s.add(loss[i], weight[i]); });
  };
  const xent::LossSum s = block(static_cast<int64_t>(loss.size()));
  CHECK(std::fabs(s.result(false) - static_cast<double>(want_l)) <= 1e-12 * static_cast<double>(want_l));
  CHECK(std::fabs(s.result(true) - static_cast<double>(want_l / want_w)) <= 1e-13);
  const xent::LossSum again = block(static_cast<int64_t>(loss.size()));
  CHECK(again.loss == s.loss);  // fixed order: bit-identical
  CHECK(block(0).result(false) == 0);
  CHECK(std::isnan(block(0).result(true)));  // mean over nothing counted: 0/0
}
