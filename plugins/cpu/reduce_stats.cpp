// Statistics over dims: var and std (two-pass blocks combined by Chan's
// formula, Welford for single elements, all in double), norm (the p = ±inf,
// 0, 1, 2 and general cases) and logsumexp (max-shifted per block, blocks
// combined by rescaling).
// Floating dtypes only; 16-bit floats and float32 compute in double here.
#include "common.hpp"
#include "reduce.hpp"
#include "reduce_driver.hpp"
#include "reduce_ops.hpp"
#include "unary_math.hpp"

#include <loom/plugin/welford.hpp>

#include <cmath>
#include <limits>

namespace loom::cpu {
namespace {

using reduce::calc_t;
using reduce::load;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kStatBlock = 1024;  // L1-resident block for two passes; divides kChunk

// ----------------------------------------------------------- var / std ---

// Count, mean, Σ(x - mean)², with Welford's and Chan's updates shared by
// every device (loom/plugin/welford.hpp).
using plugin::Moments;

// Mean and m2 of one contiguous block by the corrected two-pass formula:
// m2 = Σd² - (Σd)²/n with d = x - mean (Chan, Golub & LeVeque), exact
// enough that blocks combine with Chan's update at no loss. Three vector
// passes over a block in L1.
template <class T>
[[gnu::flatten]] LOOM_CPU_CLONES Moments block_moments(const T* p, int64_t n) {
  using reduce::vspan;
  auto add = [](auto& a, const auto& b) { a += b; };
  const double dn = static_cast<double>(n);
  const double mean = vspan<double>(p, n, 0.0, add, [](auto&) {}) / dn;
  const double sd = vspan<double>(p, n, 0.0, add, [mean](auto& v) { v = v - mean; });
  const double sd2 = vspan<double>(p, n, 0.0, add, [mean](auto& v) { v = (v - mean) * (v - mean); });
  const double m2 = sd2 - sd * sd / dn;
  return {dn, mean + sd / dn, m2 < 0 ? 0.0 : m2};
}

// sd[j] += d, sd2[j] += d² with d = row[j * s] - mean[j].
template <class T>
[[gnu::flatten]] LOOM_CPU_CLONES void deviations_row(double* sd, double* sd2, const double* mean,
                                                     const T* row, int64_t nc, int64_t s) {
  auto step = [&](int64_t j, T x) {
    const double d = static_cast<double>(load(x)) - mean[j];
    sd[j] += d;
    sd2[j] += d * d;
  };
  if (s == 1) {  // the loop that vectorises
    for (int64_t j = 0; j < nc; ++j) step(j, row[j]);
  } else {
    for (int64_t j = 0; j < nc; ++j) step(j, row[j * s]);
  }
}

template <class T, bool IsStd>
struct MomentsOp {
  using In = T;
  using Acc = Moments;
  static constexpr bool kHasIdentity = true;
  double correction;
  T* out;

  Acc init() const { return {0, 0, 0}; }  // no add_row: fold_chunk does the outer layout
  void add(Acc& a, T x, int64_t) const { plugin::welford_add(a, load(x)); }
  void run(Acc& a, const T* p, int64_t n, int64_t) const {
    for (int64_t b = 0; b < n; b += kStatBlock)
      combine(a, block_moments(p + b, std::min(kStatBlock, n - b)));
  }
  // The outer layout: the same corrected two-pass per column over a chunk
  // of rows (still in L2), column sums first.
  template <class Rows>
  void fold_chunk(Acc* a, int64_t nc, int64_t s, int64_t nrows, const Rows& rows) const {
    constexpr int64_t W = reduce::kColumnsFor<Moments>;
    double mean[W], sd[W], sd2[W];
    for (int64_t j = 0; j < nc; ++j) mean[j] = sd[j] = sd2[j] = 0;
    rows([&](const T* row, int64_t) {
      reduce::fold_columns(mean, row, nc, s, [](double& m, T x) { m += load(x); });
    });
    const double n = static_cast<double>(nrows);
    for (int64_t j = 0; j < nc; ++j) mean[j] /= n;
    rows([&](const T* row, int64_t) { deviations_row(sd, sd2, mean, row, nc, s); });
    for (int64_t j = 0; j < nc; ++j) {
      const double m2 = sd2[j] - sd[j] * sd[j] / n;
      a[j] = {n, mean[j] + sd[j] / n, m2 < 0 ? 0.0 : m2};
    }
  }
  void combine(Acc& a, const Acc& b) const { plugin::welford_combine(a, b); }
  // Divisor max(0, N - correction): 0 gives 0/0 = NaN (or m2/0 = inf), as PyTorch.
  void store(const Acc& a, int64_t n, int64_t o0, int64_t) const {
    const double v = plugin::welford_variance(a, static_cast<double>(n), correction);
    out[o0] = plugin::cast<T>(IsStd ? std::sqrt(v) : v);
  }
};

template <bool IsStd>
void moments(const LoomKernelCall& c, const char* name) {
  expect_arity(c, name, 1, 1);
  expect_values(c, name, 2);
  const int32_t dtype = c.inputs[0].dtype;
  reduce::Plan plan;
  reduce::prepare(c, name, 2, &dtype, 1, plan);
  const double correction = plugin::value_float(c, 1);
  dispatch<DTypes::Floating>(dtype, name, [&](auto tag) {
    using T = decltype(tag);
    reduce::run(plan, plugin::data_ptr<const T>(c.inputs[0]),
                MomentsOp<T, IsStd>{correction, plugin::data_ptr<T>(c.outputs[0])});
  });
}

// ------------------------------------------------------------ logsumexp ---

struct Lse {
  double m, s;  // running max and Σ exp(x - m); m = -inf: nothing yet
};

// exp(d) for an op on T: libm for double; narrower floats take the vector
// exp of unary_math.hpp (error < 1e-14, far below their precision).
template <class T>
inline double exp_for(double d) {
  if constexpr (std::is_same_v<T, double>) return std::exp(d);
  else return vmath::exp_d(d);
}

template <class T>
[[gnu::flatten]] LOOM_CPU_CLONES double sum_exp(const T* p, int64_t n, double m) {
  double e[kStatBlock];  // map first (vectorises), then sum in lanes
  for (int64_t i = 0; i < n; ++i) e[i] = exp_for<T>(static_cast<double>(load(p[i])) - m);
  double lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += e[i + l];
  double s = 0;
  for (; i < n; ++i) s += e[i];
  for (int l = 0; l < 8; ++l) s += lanes[l];
  return s;
}

// sum[j] += exp(row[j * s] - m[j]).
template <class T>
[[gnu::flatten]] LOOM_CPU_CLONES void exp_row(double* sum, const double* m, const T* row,
                                              int64_t nc, int64_t s) {
  if (s == 1) {  // the loop that vectorises
    for (int64_t j = 0; j < nc; ++j) sum[j] += exp_for<T>(static_cast<double>(load(row[j])) - m[j]);
  } else {
    for (int64_t j = 0; j < nc; ++j) sum[j] += exp_for<T>(static_cast<double>(load(row[j * s])) - m[j]);
  }
}

template <class T>
struct LseOp {
  using In = T;
  using Acc = Lse;
  static constexpr bool kHasIdentity = true;  // log(0) = -inf
  T* out;

  Acc init() const { return {-kInf, 0}; }  // no add_row: fold_chunk does the outer layout
  // One element (strided and short runs): online, with the vector exp;
  // the special values go through combine().
  void add(Acc& a, T x, int64_t) const {
    const double v = load(x);
    if (!(std::isfinite(v) && std::isfinite(a.m))) {
      combine(a, {v, 1});
    } else if (v > a.m) {
      a = {v, a.s * exp_for<T>(a.m - v) + 1};
    } else {
      a.s += exp_for<T>(v - a.m);
    }
  }
  // A short run in two scalar passes, so the exps are independent.
  void run_short(Acc& a, const T* p, int64_t n) const {
    double m = -kInf;
    for (int64_t i = 0; i < n; ++i) {
      const double v = load(p[i]);
      m = v > m || v != v ? v : m;
    }
    if (!std::isfinite(m)) {
      combine(a, {m, m == -kInf ? 0.0 : 1.0});
      return;
    }
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += exp_for<T>(static_cast<double>(load(p[i])) - m);
    combine(a, {m, s});
  }
  // Per block: its max, then Σ exp(x - max) when the max is finite.
  void run(Acc& a, const T* p, int64_t n, int64_t) const {
    for (int64_t b = 0; b < n; b += kStatBlock) {
      const int64_t len = std::min(kStatBlock, n - b);
      const double m = reduce::extreme_span<true, false>(p + b, len, load(p[b]));
      if (std::isfinite(m)) combine(a, {m, sum_exp(p + b, len, m)});
      else combine(a, {m, m == -kInf ? 0.0 : 1.0});
    }
  }
  // The outer layout: per chunk of rows, the column maxima, then the sums
  // of exp(x - max). Where a max is not finite its sum is garbage that
  // combine() and store() never read.
  template <class Rows>
  void fold_chunk(Acc* a, int64_t nc, int64_t s, int64_t, const Rows& rows) const {
    constexpr int64_t W = reduce::kColumnsFor<Lse>;
    double m[W], sum[W];
    for (int64_t j = 0; j < nc; ++j) {
      m[j] = -kInf;
      sum[j] = 0;
    }
    rows([&](const T* row, int64_t) {
      reduce::fold_columns(m, row, nc, s, [](double& mx, T x) {
        const double v = load(x);
        mx = ((v > mx) | (v != v)) ? v : mx;  // NaN sticks; "|" keeps it branch-free
      });
    });
    rows([&](const T* row, int64_t) { exp_row(sum, m, row, nc, s); });
    for (int64_t j = 0; j < nc; ++j) a[j] = {m[j], sum[j]};
  }
  void combine(Acc& a, const Acc& b) const {
    if (a.m != a.m || b.m == -kInf) return;  // a is NaN, or b adds nothing
    if (b.m != b.m || a.m == -kInf) {
      a = b;
    } else if (a.m == kInf || b.m == kInf) {
      a = {kInf, 1};
    } else if (b.m > a.m) {
      a = {b.m, a.s * std::exp(a.m - b.m) + b.s};
    } else {
      a.s += b.s * std::exp(b.m - a.m);
    }
  }
  void store(const Acc& a, int64_t, int64_t o0, int64_t) const {
    const bool special = a.m != a.m || std::isinf(a.m);  // NaN, all -inf, or +inf
    out[o0] = plugin::cast<T>(special ? a.m : a.m + std::log(a.s));
  }
};

void logsumexp_kernel(const LoomKernelCall& c) {
  expect_arity(c, "logsumexp", 1, 1);
  const int32_t dtype = c.inputs[0].dtype;
  reduce::Plan plan;
  reduce::prepare(c, "logsumexp", 1, &dtype, 1, plan);
  dispatch<DTypes::Floating>(dtype, "logsumexp", [&](auto tag) {
    using T = decltype(tag);
    reduce::run(plan, plugin::data_ptr<const T>(c.inputs[0]),
                LseOp<T>{plugin::data_ptr<T>(c.outputs[0])});
  });
}

// ----------------------------------------------------------------- norm ---

template <class T>
void norm_typed(const reduce::Plan& plan, const LoomTensorDesc& in, T* out, double p) {
  using namespace reduce;
  const T* pin = plugin::data_ptr<const T>(in);
  if (p == kInf) run(plan, pin, ExtremeOp<T, true, true>{out});
  else if (p == -kInf) run(plan, pin, ExtremeOp<T, false, true>{out});
  else if (p == 0) run(plan, pin, SumOp<T, NonzeroMap, SumFin>{{}, {}, out});
  else if (p == 1) run(plan, pin, SumOp<T, AbsMap, SumFin>{{}, {}, out});
  else if (p == 2) run(plan, pin, SumOp<T, SquareMap, SqrtFin>{{}, {}, out});
  else run(plan, pin, SumOp<T, PowMap, RootFin>{{p}, {p}, out});
}

void norm_kernel(const LoomKernelCall& c) {
  expect_arity(c, "norm", 1, 1);
  expect_values(c, "norm", 2);
  const int32_t dtype = c.inputs[0].dtype;
  reduce::Plan plan;
  reduce::prepare(c, "norm", 2, &dtype, 1, plan);
  const double p = plugin::value_float(c, 1);
  if (p != p) fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu norm: p is NaN");
  dispatch<DTypes::Floating>(dtype, "norm", [&](auto tag) {
    using T = decltype(tag);
    norm_typed<T>(plan, c.inputs[0], plugin::data_ptr<T>(c.outputs[0]), p);
  });
}

}  // namespace

void var(const LoomKernelCall& c) { moments<false>(c, "var"); }
void stddev(const LoomKernelCall& c) { moments<true>(c, "std"); }
void norm(const LoomKernelCall& c) { norm_kernel(c); }
void logsumexp(const LoomKernelCall& c) { logsumexp_kernel(c); }

}  // namespace loom::cpu
