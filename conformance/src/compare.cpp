// compare.cpp — assert_close-style comparison of a result with its reference.
#include "compare.h"

#include <loom/loom.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace loom::conformance {
namespace {

std::string dims_str(IntArrayRef s) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? "," : "") << s[i];
  os << ']';
  return os.str();
}

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b;
}

// Mean and range of the finite values.
struct Stats {
  double mean = 0, sd = 0, lo = 0, hi = 0;
  int64_t n = 0;
};
Stats stats(const std::vector<double>& v) {
  Stats s;
  double sq = 0;
  for (double x : v) {
    if (!std::isfinite(x)) continue;
    if (s.n == 0) s.lo = s.hi = x;
    s.lo = std::min(s.lo, x), s.hi = std::max(s.hi, x);
    s.mean += x, sq += x * x, ++s.n;
  }
  if (s.n) {
    s.mean /= static_cast<double>(s.n);
    s.sd = std::sqrt(std::max(0.0, sq / static_cast<double>(s.n) - s.mean * s.mean));
  }
  return s;
}

}  // namespace

Tolerance tolerance_for(DType dtype, double sample_atol, double sample_rtol, bool accumulates) {
  constexpr Tolerance f32{1.3e-6, 1e-5};
  Tolerance t;
  switch (dtype) {
    case DType::Float16: t = {1e-3, 1e-5}; break;
    case DType::BFloat16: t = {1.6e-2, 1e-5}; break;
    case DType::Float32: t = f32; break;
    case DType::Float64: t = {1e-7, 1e-7}; break;
    default: return {0, 0};  // integer and bool: exact
  }
  if (dtype == DType::Float64) return t;
  const double scale_r = t.rtol / f32.rtol, scale_a = t.atol / f32.atol;
  if (sample_rtol > 0) t.rtol = std::max(t.rtol, sample_rtol * scale_r);
  if (sample_atol > 0) t.atol = std::max(t.atol, sample_atol * scale_a);
  if (accumulates && dtype == DType::Float16) t.atol = std::max(t.atol, 5e-3);
  if (accumulates && dtype == DType::BFloat16) t.atol = std::max(t.atol, 1e-2);
  return t;
}

Tolerance result_tolerance(DType case_dtype, DType result_dtype, double sample_atol, double sample_rtol,
                           bool accumulates) {
  const DType t = !is_floating_point(case_dtype) && is_floating_point(result_dtype) ? result_dtype : case_dtype;
  return tolerance_for(t, sample_atol, sample_rtol, accumulates);
}

std::string check_layout(const Tensor& t) {
  if (t.numel() == 0) return {};
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.strides()[d] < 0) return "negative stride " + std::to_string(t.strides()[d]);
    last += t.strides()[d] * (t.sizes()[d] - 1);
  }
  const size_t need = static_cast<size_t>(last + 1) * t.element_size();
  if (need > t.storage()->nbytes())
    return "strides " + dims_str(t.strides()) + " at offset " + std::to_string(t.storage_offset()) +
           " reach byte " + std::to_string(need) + " of a " + std::to_string(t.storage()->nbytes()) +
           "-byte storage";
  return {};
}

Comparison compare(const Tensor& actual_any, const Tensor& expected, opinfo::Compare mode, Tolerance tol) {
  Comparison c;
  if (actual_any.dtype() != expected.dtype()) {
    c.status = Status::FailDType;
    c.message = "dtype " + std::string(name(actual_any.dtype())) + ", expected " + std::string(name(expected.dtype()));
    return c;
  }
  if (!std::equal(actual_any.sizes().begin(), actual_any.sizes().end(), expected.sizes().begin(),
                  expected.sizes().end())) {
    c.status = Status::FailShape;
    c.message = "shape " + dims_str(actual_any.sizes()) + ", expected " + dims_str(expected.sizes());
    return c;
  }
  if (std::string bad = check_layout(actual_any); !bad.empty()) {
    c.status = Status::FailShape;
    c.message = "result layout: " + bad;
    return c;
  }
  if (mode == opinfo::Compare::ShapeOnly || expected.numel() == 0) return c;
  const Tensor actual = actual_any.cpu();
  const DType dt = expected.dtype();

  if (!is_floating_point(dt) && mode != opinfo::Compare::Statistical) {
    // Exact, in int64 so that no integer loses precision. (Random integer
    // results, multinomial's indices, are compared as distributions below.)
    const auto a = actual.to(DType::Int64).to_vector<int64_t>();
    const auto e = expected.to(DType::Int64).to_vector<int64_t>();
    for (size_t i = 0; i < a.size(); ++i) {
      const double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(e[i]));
      c.max_abs = std::max(c.max_abs, d);
      if (d > 0) c.max_rel = std::max(c.max_rel, d / std::max(1.0, std::fabs(static_cast<double>(e[i]))));
      if (a[i] != e[i] && c.status == Status::Pass) {
        c.status = Status::FailValue;
        c.message = "element " + std::to_string(i) + " is " + std::to_string(a[i]) + ", expected " +
                    std::to_string(e[i]);
      }
    }
    return c;
  }

  const auto a = actual.to(DType::Float64).to_vector<double>();
  const auto e = expected.to(DType::Float64).to_vector<double>();
  if (mode == opinfo::Compare::Statistical) {
    // Random ops: devices draw other numbers; compare the distribution.
    const Stats sa = stats(a), se = stats(e);
    const double width = std::max(se.hi - se.lo, 1e-12);
    // Mean and spread within 10% of the range and 15% of the spread; the
    // extremes within a quarter of the range (a normal sample's tails move
    // from draw to draw, a uniform one's bounds do not).
    if (sa.n != se.n || (se.n >= 100 && (std::fabs(sa.mean - se.mean) > 0.1 * width ||
                                         std::fabs(sa.sd - se.sd) > 0.15 * se.sd + 1e-12 ||
                                         sa.lo < se.lo - 0.25 * width || sa.hi > se.hi + 0.25 * width))) {
      c.status = Status::FailValue;
      std::ostringstream os;
      os << "distribution: mean " << sa.mean << " sd " << sa.sd << " in [" << sa.lo << ", " << sa.hi
         << "], expected mean " << se.mean << " sd " << se.sd << " in [" << se.lo << ", " << se.hi << "]";
      c.message = os.str();
    }
    return c;
  }
  const bool exact = mode == opinfo::Compare::Exact;
  int64_t bad = 0, first_bad = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (same_value(a[i], e[i])) continue;
    bool ok = false;
    if (std::isfinite(a[i]) && std::isfinite(e[i])) {
      const double d = std::fabs(a[i] - e[i]);
      c.max_abs = std::max(c.max_abs, d);
      if (e[i] != 0) c.max_rel = std::max(c.max_rel, d / std::fabs(e[i]));
      ok = !exact && d <= tol.atol + tol.rtol * std::fabs(e[i]);
    } else {
      c.max_abs = c.max_rel = INFINITY;
    }
    if (!ok && bad++ == 0) first_bad = static_cast<int64_t>(i);
  }
  if (bad) {
    c.status = Status::FailValue;
    std::ostringstream os;
    os.precision(9);
    os << bad << " of " << a.size() << " elements differ";
    if (!exact) os << " beyond rtol " << tol.rtol << " / atol " << tol.atol;
    os << "; first at " << first_bad << ": " << a[first_bad] << " vs " << e[first_bad];
    c.message = os.str();
  }
  return c;
}

}  // namespace loom::conformance
