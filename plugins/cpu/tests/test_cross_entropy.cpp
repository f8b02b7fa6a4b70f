// The fused cross_entropy and _cross_entropy_backward kernels through the
// fake host, against long-double references of PyTorch's formulas: float32
// and float64, [N, C] rows (lengths around the vector widths), spatial
// inputs (one and several tiles), 1-d inputs, every reduction with and
// without class weights, ignore_index and label smoothing; then the calls
// the kernels decline or reject. (core/tests/cross_entropy_test.cpp
// compares the same kernels with the core's composites through the
// dispatcher.)
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>
#include <string>

using namespace loom_test;

namespace {

LoomValue string_value(const std::string& s) {
  static std::vector<std::unique_ptr<std::string>> keep;
  keep.push_back(std::make_unique<std::string>(s));
  LoomValue v{};
  v.kind = LOOM_VALUE_STRING;
  v.u.str.data = keep.back()->data();
  v.u.str.size = static_cast<int64_t>(keep.back()->size());
  return v;
}

struct Options {
  std::string reduction = "mean";
  int64_t ignore_index = -100;
  double ls = 0;
  bool weighted = false;
};

// One problem: input [N, C, inner...] (or [C]), targets, weights.
struct Case {
  Tensor x, target, weight;  // weight: shape {} and unused when not weighted
  int64_t N, C, inner;
};

std::vector<int64_t> target_shape(const std::vector<int64_t>& shape) {
  std::vector<int64_t> t = shape;
  t.erase(t.begin() + (shape.size() == 1 ? 0 : 1));
  return t;
}

Case make_case(int32_t dt, const std::vector<int64_t>& shape, int seed) {
  Case k{make(dt, shape), make(LOOM_DTYPE_INT64, target_shape(shape)), make(dt, {}), 1, 1, 1};
  k.N = shape.size() == 1 ? 1 : shape[0];
  k.C = shape.size() == 1 ? shape[0] : shape[1];
  for (size_t d = 2; d < shape.size(); ++d) k.inner *= shape[d];
  fill_pattern(k.x, seed);
  int64_t r = 0;
  for_each_index(k.target.shape, [&](const std::vector<int64_t>& idx) { set(k.target, idx, (r++ * 5 + seed) % k.C); });
  k.weight = make(dt, {k.C});
  for (int64_t c = 0; c < k.C; ++c) set(k.weight, {c}, 0.25L + static_cast<long double>((c * 3) % 7) / 4);
  return k;
}

// Flat element i of a contiguous tensor.
long double at(const Tensor& t, int64_t i) {
  std::vector<int64_t> idx(t.shape.size());
  for (size_t d = t.shape.size(); d-- > 0;) {
    idx[d] = i % t.shape[d];
    i /= t.shape[d];
  }
  return get(t, idx);
}

// x[n, c, j] of the [N, C, inner] view.
long double logit(const Case& k, int64_t r, int64_t c) {
  const int64_t n = r / k.inner, j = r % k.inner;
  return at(k.x, (n * k.C + c) * k.inner + j);
}

struct Reference {
  std::vector<long double> loss;  // per sample ('none'), or the one result
  std::vector<long double> grad;  // [N, C, inner] row-major, for grad_output `g` (per sample or one)
};

// PyTorch's cross_entropy and its input gradient, straight from the
// definition: log p = x - logsumexp(x); loss = (1 - ls) nll + ls/C smooth.
Reference reference(const Case& k, const Options& o, const std::vector<long double>& g) {
  const int64_t S = k.N * k.inner;
  auto w = [&](int64_t c) { return o.weighted ? at(k.weight, c) : 1.0L; };
  long double sw = 0, total = 0, total_w = 0;
  for (int64_t c = 0; c < k.C; ++c) sw += w(c);
  std::vector<long double> per(static_cast<size_t>(S)), logp(static_cast<size_t>(k.C));
  Reference ref;
  ref.grad.assign(static_cast<size_t>(S * k.C), 0);
  for (int64_t r = 0; r < S; ++r) {
    const int64_t t = static_cast<int64_t>(at(k.target, r));
    if (t == o.ignore_index) continue;
    long double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < k.C; ++c) m = std::max(m, logit(k, r, c));
    for (int64_t c = 0; c < k.C; ++c) s += std::exp(logit(k, r, c) - m);
    long double smooth = 0;
    for (int64_t c = 0; c < k.C; ++c) {
      logp[c] = logit(k, r, c) - m - std::log(s);
      smooth -= w(c) * logp[c];
    }
    per[r] = -(1 - o.ls) * w(t) * logp[t] + o.ls / k.C * smooth;
    total += per[r];
    total_w += w(t);
  }
  if (o.reduction == "none") ref.loss = per;
  else ref.loss = {o.reduction == "sum" ? total : total / total_w};
  for (int64_t r = 0; r < S; ++r) {
    const int64_t t = static_cast<int64_t>(at(k.target, r));
    if (t == o.ignore_index) continue;
    const long double coef = o.reduction == "none" ? g[r] : o.reduction == "sum" ? g[0] : g[0] / total_w;
    long double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < k.C; ++c) m = std::max(m, logit(k, r, c));
    for (int64_t c = 0; c < k.C; ++c) s += std::exp(logit(k, r, c) - m);
    const int64_t n = r / k.inner, j = r % k.inner;
    for (int64_t c = 0; c < k.C; ++c) {
      const long double p = std::exp(logit(k, r, c) - m) / s;
      const long double d = (1 - o.ls) * w(t) * (p - (c == t)) + o.ls / k.C * (p * sw - w(c));
      ref.grad[static_cast<size_t>((n * k.C + c) * k.inner + j)] = coef * d;
    }
  }
  return ref;
}

std::vector<LoomValue> values_of(const Options& o) {
  return {string_value(o.reduction), int_value(o.ignore_index), float_value(o.ls)};
}

LoomTensorDesc weight_desc(const Case& k, const Options& o) {
  LoomTensorDesc absent{};
  absent.struct_size = sizeof absent;
  absent.ndim = -1;
  return o.weighted ? k.weight.desc() : absent;
}

void check_close(const Tensor& got, const std::vector<long double>& want, int32_t dt, long double scale) {
  REQUIRE(got.numel() == static_cast<int64_t>(want.size()));
  const long double tol = dt == LOOM_DTYPE_FLOAT64 ? 1e-12L : 2e-5L;
  for (int64_t i = 0; i < got.numel(); ++i) {
    INFO("element " << i << " got " << static_cast<double>(at(got, i)) << " want " << static_cast<double>(want[i]));
    if (std::isnan(static_cast<double>(want[i]))) CHECK(std::isnan(static_cast<double>(at(got, i))));  // 0/0
    else CHECK(std::fabs(at(got, i) - want[i]) <= tol * (scale + std::fabs(want[i])));
  }
}

// Forward and backward of one case and option set against the reference.
void check_case(int32_t dt, const std::vector<int64_t>& shape, const Options& o, int seed) {
  const Case k = make_case(dt, shape, seed);
  const bool none = o.reduction == "none";
  const std::vector<int64_t> lshape = none ? target_shape(shape) : std::vector<int64_t>{};
  Tensor grad = make(dt, lshape);
  std::vector<long double> g(static_cast<size_t>(grad.numel()));
  for (int64_t i = 0; i < grad.numel(); ++i) {
    g[i] = static_cast<long double>((i * 7 + 3) % 11 - 5) / 4;
    std::vector<int64_t> idx(lshape.size());
    int64_t rest = i;
    for (size_t d = lshape.size(); d-- > 0;) {
      idx[d] = rest % lshape[d];
      rest /= lshape[d];
    }
    set(grad, idx, g[i]);
  }
  const Reference ref = reference(k, o, g);
  Tensor loss = make(dt, lshape);
  run("cross_entropy", {k.x.desc(), k.target.desc(), weight_desc(k, o)}, {loss.desc()}, values_of(o));
  check_close(loss, ref.loss, dt, none ? 1 : static_cast<long double>(k.N * k.inner));
  Tensor dx = make(dt, shape);
  run("_cross_entropy_backward", {grad.desc(), k.x.desc(), k.target.desc(), weight_desc(k, o)}, {dx.desc()},
      values_of(o));
  check_close(dx, ref.grad, dt, 1);
}

}  // namespace

TEST_CASE("cross_entropy kernels: every layout, reduction and option against the definition", "[nn][cpu]") {
  const std::vector<std::vector<int64_t>> shapes{{5, 7}, {3, 16}, {4, 33}, {2, 300}, {9}, {2, 3, 5},
                                                 {2, 4, 70}, {3, 2, 2, 3}};
  int seed = 0;
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64}) {
    for (const auto& shape : shapes) {
      for (const char* reduction : {"none", "mean", "sum"}) {
        for (bool weighted : {false, true}) {
          for (double ls : {0.0, 0.2}) {
            for (int64_t ignore : {int64_t{-100}, int64_t{1}}) {
              const Options o{reduction, ignore, ls, weighted};
              INFO("dtype " << dt << " shape rank " << shape.size() << " first dim " << shape[0] << " reduction "
                            << reduction << " weighted " << weighted << " ls " << ls << " ignore " << ignore);
              check_case(dt, shape, o, ++seed);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("cross_entropy kernels: empty batches and every target ignored", "[nn][cpu]") {
  const Options mean{"mean", 0, 0.1, true};
  Case k = make_case(LOOM_DTYPE_FLOAT32, {3, 4}, 0);
  for (int64_t r = 0; r < 3; ++r) set(k.target, {r}, 0);
  Tensor loss = make(LOOM_DTYPE_FLOAT32, {});
  run("cross_entropy", {k.x.desc(), k.target.desc(), weight_desc(k, mean)}, {loss.desc()}, values_of(mean));
  CHECK(std::isnan(static_cast<double>(get(loss, {}))));  // 0/0, as PyTorch
  Tensor grad = make(LOOM_DTYPE_FLOAT32, {}), dx = make(LOOM_DTYPE_FLOAT32, {3, 4});
  set(grad, {}, 1);
  fill_pattern(dx, 5);
  run("_cross_entropy_backward", {grad.desc(), k.x.desc(), k.target.desc(), weight_desc(k, mean)}, {dx.desc()},
      values_of(mean));
  for_each_index(dx.shape, [&](const std::vector<int64_t>& idx) { CHECK(get(dx, idx) == 0); });

  const Case e = make_case(LOOM_DTYPE_FLOAT64, {0, 4}, 0);
  Tensor out = make(LOOM_DTYPE_FLOAT64, {});
  run("cross_entropy", {e.x.desc(), e.target.desc(), weight_desc(e, {})}, {out.desc()}, values_of({"sum"}));
  CHECK(get(out, {}) == 0);
  run("cross_entropy", {e.x.desc(), e.target.desc(), weight_desc(e, {})}, {out.desc()}, values_of({"mean"}));
  CHECK(std::isnan(static_cast<double>(get(out, {}))));
}

TEST_CASE("cross_entropy kernels: bad targets fail as the composite does; other calls are declined", "[nn][cpu]") {
  Case k = make_case(LOOM_DTYPE_FLOAT32, {3, 4}, 0);
  set(k.target, {1}, 4);
  Tensor loss = make(LOOM_DTYPE_FLOAT32, {});
  LoomError* e = call("cross_entropy", {k.x.desc(), k.target.desc(), weight_desc(k, {})}, {loss.desc()}, values_of({}));
  REQUIRE(e != nullptr);
  CHECK(e->code == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(e->message) ==
        "cross_entropy: target 4 is out of bounds for 4 classes (at flat index 1 of the target; ignore_index is -100)");
  e->destroy(e);
  set(k.target, {2}, -1);
  Tensor grad = make(LOOM_DTYPE_FLOAT32, {}), dx = make(LOOM_DTYPE_FLOAT32, {3, 4});
  e = call("_cross_entropy_backward", {grad.desc(), k.x.desc(), k.target.desc(), weight_desc(k, {})}, {dx.desc()},
           values_of({"mean", 4}));  // 4 is ignored now; -1 is not
  REQUIRE(e != nullptr);
  CHECK(std::string(e->message) == "_cross_entropy_backward: target -1 is out of bounds for 4 classes (at flat "
                                   "index 2 of the target; ignore_index is 4)");
  e->destroy(e);

  const Case ok = make_case(LOOM_DTYPE_FLOAT32, {3, 4}, 0);
  const LoomTensorDesc none = weight_desc(ok, {});
  // Probability targets (floating) and 16-bit inputs: the composite's job.
  CHECK(status_of("cross_entropy", {ok.x.desc(), ok.x.desc(), none}, {loss.desc()}, values_of({})) ==
        LOOM_STATUS_UNSUPPORTED);
  const Case half = make_case(LOOM_DTYPE_FLOAT16, {3, 4}, 0);
  Tensor hloss = make(LOOM_DTYPE_FLOAT16, {});
  CHECK(status_of("cross_entropy", {half.x.desc(), half.target.desc(), none}, {hloss.desc()}, values_of({})) ==
        LOOM_STATUS_UNSUPPORTED);
  // Contract violations.
  CHECK(status_of("cross_entropy", {ok.x.desc(), ok.target.desc(), none}, {loss.desc()}, values_of({"avg"})) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  const Tensor strided = transpose(make_case(LOOM_DTYPE_FLOAT32, {4, 3}, 0).x, 0, 1);
  CHECK(status_of("cross_entropy", {strided.desc(), ok.target.desc(), none}, {loss.desc()}, values_of({})) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("cross_entropy", {ok.x.desc(), ok.target.desc(), none}, {make(LOOM_DTYPE_FLOAT32, {3}).desc()},
                  values_of({})) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("_cross_entropy_backward", {make(LOOM_DTYPE_FLOAT32, {3}).desc(), ok.x.desc(), ok.target.desc(),
                                              none}, {dx.desc()}, values_of({})) == LOOM_STATUS_INVALID_ARGUMENT);
}
