// Reference checks for the reduction kernels: every op recomputed from the
// slice values in long double (integers in wrapping 64-bit arithmetic), and
// compared with what the kernel wrote into keepdim-form outputs.
#pragma once

#include "test_support.hpp"

#include <loom/plugin/cast.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace loom_test::reduce {

using LD = long double;
inline constexpr LD kInf = std::numeric_limits<LD>::infinity();
inline constexpr LD kNaN = std::numeric_limits<LD>::quiet_NaN();

inline std::vector<int64_t> keepdim_shape(std::vector<int64_t> shape, const std::vector<int64_t>& dims) {
  if (dims.empty())
    for (auto& s : shape) s = 1;
  for (int64_t d : dims) shape[static_cast<size_t>(d)] = 1;
  return shape;
}

// v as stored in dtype dt (floats round, integers wrap, bool is v != 0).
inline LD to_dtype(int32_t dt, LD v) {
  return loom::plugin::visit_dtype(dt, [&](auto tag) -> LD {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) return v != 0 ? 1 : 0;
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(v)));
    else {
      const T r = loom::plugin::cast<T>(static_cast<double>(v));
      if constexpr (loom::plugin::is_half_v<T>) return static_cast<float>(r);
      else return static_cast<LD>(r);
    }
  });
}

inline bool any_nan(const std::vector<LD>& x) {
  for (LD v : x)
    if (v != v) return true;
  return false;
}

// What the kernel should produce for one slice: value, index (arg ops),
// and a magnitude that scales the accumulation tolerance.
struct Want {
  LD v = 0;
  int64_t idx = -1;
  LD scale = 0;
};

inline Want extreme(const std::vector<LD>& x, bool is_max) {
  Want w;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] != x[i]) return {kNaN, static_cast<int64_t>(i), 0};
    if (w.idx < 0 || (is_max ? x[i] > w.v : x[i] < w.v)) w = {x[i], static_cast<int64_t>(i), 0};
  }
  return w;
}

// param: the correction (var/std) or p (norm).
inline Want reference(const std::string& op, double param, int32_t dt, const std::vector<LD>& x) {
  const bool fl = is_floating(dt);
  const LD n = static_cast<LD>(x.size());
  LD abs_sum = 0, sum = 0;
  for (LD v : x) {
    sum += v;
    abs_sum += std::fabs(v);
  }
  if (op == "sum" || op == "mean") {
    if (!fl) {
      uint64_t s = 0;
      for (LD v : x) s += static_cast<uint64_t>(static_cast<int64_t>(v));
      return {to_dtype(dt, static_cast<LD>(static_cast<int64_t>(s))), -1, 0};
    }
    return op == "sum" ? Want{sum, -1, abs_sum} : Want{sum / n, -1, abs_sum / n};
  }
  if (op == "prod") {
    if (!fl) {
      uint64_t p = 1;
      for (LD v : x) p *= static_cast<uint64_t>(static_cast<int64_t>(v));
      return {to_dtype(dt, static_cast<LD>(static_cast<int64_t>(p))), -1, 0};
    }
    LD p = 1;
    for (LD v : x) p *= v;
    return {p, -1, std::fabs(p)};
  }
  if (op == "amax" || op == "max.dim" || op == "argmax") return extreme(x, true);
  if (op == "amin" || op == "min.dim" || op == "argmin") return extreme(x, false);
  if (op == "all" || op == "any") {
    bool r = op == "all";
    for (LD v : x) r = op == "all" ? (r && v != 0) : (r || v != 0);  // NaN != 0
    return {r ? 1.0L : 0.0L, -1, 0};
  }
  if (op == "var" || op == "std") {
    const LD mean = sum / n;
    LD m2 = 0, sq = 0;
    for (LD v : x) {
      m2 += (v - mean) * (v - mean);
      sq += v * v;
    }
    const LD div = std::max<LD>(0, n - static_cast<LD>(param));
    const LD var = x.empty() ? kNaN : m2 / div;
    return op == "var" ? Want{var, -1, sq / std::max<LD>(n, 1)}
                       : Want{std::sqrt(var), -1, std::sqrt(sq / std::max<LD>(n, 1))};
  }
  if (op == "norm") {
    const LD p = param;
    if (p == kInf || p == -kInf) {
      std::vector<LD> a;
      for (LD v : x) a.push_back(std::fabs(v));
      if (x.empty()) return {p > 0 ? 0 : kInf, -1, 0};
      return {extreme(a, p > 0).v, -1, 0};
    }
    LD s = 0;
    for (LD v : x) s += p == 0 ? (v != 0 ? 1 : 0) : std::pow(std::fabs(v), p);
    const LD r = p == 0 || p == 1 ? s : std::pow(s, 1 / p);
    return {r, -1, std::fabs(r)};
  }
  if (op == "logsumexp") {
    if (x.empty()) return {-kInf, -1, 0};
    const LD m = extreme(x, true).v;
    if (m != m || std::isinf(m)) return {m, -1, 0};
    LD s = 0;
    for (LD v : x) s += std::exp(v - m);
    return {m + std::log(s), -1, 1};
  }
  FAIL("no reference for " << op);
  return {};
}

// The accumulation error allowed beyond rounding the result: float lanes
// (sum, mean, norm 1 on 16/32-bit floats) versus double everywhere else.
inline LD acc_tolerance(const std::string& op, double param, int32_t dt) {
  const bool float_lanes = (op == "sum" || op == "mean" || (op == "norm" && param == 1)) &&
                           dt != LOOM_DTYPE_FLOAT64;
  return float_lanes ? 2e-6L : 1e-12L;
}

inline bool close(LD got, LD want, LD tol) {
  if (want != want) return got != got;
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol;
}

inline bool is_index_op(const std::string& op) { return op == "argmax" || op == "argmin"; }
inline bool has_indices(const std::string& op) { return op == "max.dim" || op == "min.dim"; }
inline bool has_param(const std::string& op) { return op == "var" || op == "std" || op == "norm"; }

inline int32_t out_dtype(const std::string& op, int32_t dt) {
  if (op == "all" || op == "any") return LOOM_DTYPE_BOOL;
  if (is_index_op(op)) return LOOM_DTYPE_INT64;
  return dt;
}

// Runs `op` over `dims` (empty: every dim) of `in` and checks every output
// element. `out_transposed` gives the first output reversed strides.
inline void check(const std::string& op, const Tensor& in, const std::vector<int64_t>& dims,
                  double param = 0, bool out_transposed = false) {
  const int32_t dt = in.dtype;
  const std::vector<int64_t> oshape = keepdim_shape(in.shape, dims);
  Tensor out = make(out_dtype(op, dt), oshape);
  if (out_transposed && oshape.size() >= 2) {  // same shape, column-major strides
    int64_t acc = 1;
    for (size_t d = 0; d < oshape.size(); ++d) {
      out.strides[d] = acc;
      acc *= oshape[d];
    }
  }
  Tensor idx = make(LOOM_DTYPE_INT64, oshape);
  fill_pattern(out, 77);  // garbage that must be overwritten
  fill_pattern(idx, 78);
  std::vector<LoomTensorDesc> outs{out.desc()};
  if (has_indices(op)) outs.push_back(idx.desc());
  std::vector<LoomValue> values{int_list_value(dims)};
  if (has_param(op)) values.push_back(float_value(param));
  run(op, {in.desc()}, outs, values);

  // Slices in row-major order of the reduced dims.
  std::vector<bool> red(in.shape.size(), dims.empty());
  for (int64_t d : dims) red[static_cast<size_t>(d)] = true;
  const std::vector<int64_t> ostr = contiguous_strides(oshape);
  int64_t nout = 1;
  for (int64_t s : oshape) nout *= s;
  std::vector<std::vector<LD>> slices(static_cast<size_t>(nout));
  for_each_index(in.shape, [&](const std::vector<int64_t>& i) {
    size_t o = 0;
    for (size_t d = 0; d < i.size(); ++d) o += static_cast<size_t>((red[d] ? 0 : i[d]) * ostr[d]);
    slices[o].push_back(get(in, i));
  });
  const LD acc_tol = acc_tolerance(op, param, dt);
  // Mismatches are counted and the first few reported: one CHECK per
  // element would dominate the run time of large cases.
  int64_t bad = 0;
  auto report = [&](int64_t o, const std::string& what, LD got, LD want, LD tol) {
    if (bad++ < 5)
      FAIL_CHECK(op << " " << loom::plugin::dtype_name(dt) << " output " << o << " of " << nout
                    << " (slice of " << slices[static_cast<size_t>(o)].size() << "), param " << param
                    << ": " << what << " got " << static_cast<double>(got) << ", want "
                    << static_cast<double>(want) << " (tol " << static_cast<double>(tol) << ")");
  };
  const int32_t odt = out_dtype(op, dt);
  int64_t o = 0;
  for_each_index(oshape, [&](const std::vector<int64_t>& i) {
    const Want w = reference(op, param, dt, slices[static_cast<size_t>(o)]);
    if (is_index_op(op) || has_indices(op)) {
      const LD got = get(is_index_op(op) ? out : idx, i);
      if (got != static_cast<LD>(w.idx)) report(o, "index", got, static_cast<LD>(w.idx), 0);
    }
    if (!is_index_op(op)) {
      const LD got = get(out, i);
      if (!is_floating(odt)) {
        const LD want = odt == LOOM_DTYPE_BOOL ? (w.v != 0 ? 1 : 0) : w.v;
        if (got != want) report(o, "value", got, want, 0);
      } else {
        const LD want = to_dtype(dt, w.v);
        const LD tol = 2 * eps_of(dt) * std::fabs(want) + acc_tol * w.scale + 1e-30L;
        if (!close(got, want, tol)) report(o, "value", got, want, tol);
      }
    }
    ++o;
  });
  CHECK(bad == 0);
}

// The dtypes an op takes (its registered mask).
inline std::vector<int32_t> dtypes_of(const std::string& op) {
  const uint64_t mask = host().kernels.at(op).dtypes;
  std::vector<int32_t> v;
  for (int32_t dt : all_dtypes())
    if (mask == 0 || (mask & LOOM_DTYPE_BIT(dt))) v.push_back(dt);
  return v;
}

inline const std::vector<std::string>& value_ops() {
  static const std::vector<std::string> v{"sum", "mean", "prod", "amax", "amin", "var", "std",
                                          "norm", "logsumexp", "all", "any"};
  return v;
}
inline const std::vector<std::string>& index_ops() {
  static const std::vector<std::string> v{"max.dim", "min.dim", "argmax", "argmin"};
  return v;
}

}  // namespace loom_test::reduce
