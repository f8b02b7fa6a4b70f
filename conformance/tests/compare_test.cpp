// The comparison at the heart of every case: tolerances per dtype, NaN,
// infinities, integer exactness, dtype / shape / layout checks.
#include "compare.h"

#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <cmath>

using loom::DType;
using loom::conformance::compare;
using loom::conformance::Status;
using loom::conformance::tolerance_for;
using loom::opinfo::Compare;

namespace {
loom::Tensor f32(std::vector<float> v) { return loom::from_vector<float>(v, {static_cast<int64_t>(v.size())}); }
}  // namespace

TEST_CASE("tolerances follow assert_close per dtype; sample overrides scale for halves") {
  CHECK(tolerance_for(DType::Float32).rtol == 1.3e-6);
  CHECK(tolerance_for(DType::Float32).atol == 1e-5);
  CHECK(tolerance_for(DType::Float16).rtol == 1e-3);
  CHECK(tolerance_for(DType::BFloat16).rtol == 1.6e-2);
  CHECK(tolerance_for(DType::Float64).atol == 1e-7);
  CHECK(tolerance_for(DType::Int64).rtol == 0);
  CHECK(tolerance_for(DType::Float32, 1e-4, 1e-4).rtol == 1e-4);
  CHECK(tolerance_for(DType::Float16, 1e-4, 1e-4).rtol > 1e-3);  // scaled, never below the default
}

TEST_CASE("an integer case with a floating result compares within the result dtype's tolerance") {
  using loom::conformance::result_tolerance;
  CHECK(result_tolerance(DType::Int8, DType::Float32).rtol == 1.3e-6);   // sin(int8) is float math
  CHECK(result_tolerance(DType::Bool, DType::Float32).atol == 1e-5);
  CHECK(result_tolerance(DType::Int32, DType::Int32).rtol == 0);         // integer results stay exact
  CHECK(result_tolerance(DType::Float16, DType::Float32).rtol == 1e-3);  // a floating case keeps its own
  // One ulp of float32 apart (a device's atan2 against the CPU's) passes the float32 tolerance.
  const auto tol = result_tolerance(DType::Int32, DType::Float32);
  CHECK(compare(f32({1.10714865f}), f32({1.10714877f}), Compare::Close, tol).status == Status::Pass);
}

TEST_CASE("close values pass, far values fail with their errors") {
  const auto tol = tolerance_for(DType::Float32);
  auto ok = compare(f32({1.0f, 2.0f}), f32({1.0f, 2.000001f}), Compare::Close, tol);
  CHECK(ok.status == Status::Pass);
  auto bad = compare(f32({1.0f, 2.5f}), f32({1.0f, 2.0f}), Compare::Close, tol);
  CHECK(bad.status == Status::FailValue);
  CHECK(bad.max_abs == Approx(0.5));
  CHECK(bad.max_rel == Approx(0.25));
  CHECK_THAT(bad.message, Catch::Contains("1 of 2 elements differ"));
  // Exact mode refuses even a tiny difference.
  CHECK(compare(f32({2.0f}), f32({2.000001f}), Compare::Exact, tol).status == Status::FailValue);
}

TEST_CASE("NaN equals NaN; infinities must match; NaN vs a number fails") {
  const auto tol = tolerance_for(DType::Float32);
  const float nan = NAN, inf = INFINITY;
  CHECK(compare(f32({nan, inf, -inf}), f32({nan, inf, -inf}), Compare::Close, tol).status == Status::Pass);
  CHECK(compare(f32({nan}), f32({1.0f}), Compare::Close, tol).status == Status::FailValue);
  CHECK(compare(f32({inf}), f32({-inf}), Compare::Close, tol).status == Status::FailValue);
  CHECK(compare(f32({1e30f}), f32({inf}), Compare::Close, tol).status == Status::FailValue);
}

TEST_CASE("integers and bools compare exactly, beyond double precision too") {
  const auto big = loom::from_vector<int64_t>({(int64_t{1} << 60) + 1}, {1});
  const auto big2 = loom::from_vector<int64_t>({int64_t{1} << 60}, {1});
  CHECK(compare(big, big, Compare::Close, tolerance_for(DType::Int64)).status == Status::Pass);
  CHECK(compare(big, big2, Compare::Close, tolerance_for(DType::Int64)).status == Status::FailValue);
  const auto t = loom::from_vector<int64_t>({1, 0}, {2}).to(DType::Bool);
  const auto f = loom::from_vector<int64_t>({1, 1}, {2}).to(DType::Bool);
  CHECK(compare(t, f, Compare::Close, tolerance_for(DType::Bool)).status == Status::FailValue);
}

TEST_CASE("dtype and shape mismatches are their own statuses") {
  const auto tol = tolerance_for(DType::Float32);
  CHECK(compare(f32({1, 2}).to(DType::Float64), f32({1, 2}), Compare::Close, tol).status == Status::FailDType);
  CHECK(compare(f32({1, 2}), f32({1, 2, 3}), Compare::Close, tol).status == Status::FailShape);
  CHECK(compare(f32({1, 2}).view({2, 1}), f32({1, 2}), Compare::Close, tol).status == Status::FailShape);
  // ShapeOnly ignores values.
  CHECK(compare(f32({1, 2}), f32({3, 4}), Compare::ShapeOnly, tol).status == Status::Pass);
}

TEST_CASE("a result whose strides leave its storage is a layout failure") {
  auto t = f32({1, 2, 3, 4});
  CHECK(loom::conformance::check_layout(t).empty());
  CHECK(loom::conformance::check_layout(t.as_strided({2, 2}, {1, 2})).empty());
  // as_strided refuses such a view, but a kernel or composite could hand one back.
  const std::vector<int64_t> sizes{2, 2}, strides{2, 2};
  loom::Tensor beyond(loom::detail::make_intrusive<loom::TensorImpl>(t.storage(), DType::Float32, sizes, strides, 1));
  CHECK_THAT(loom::conformance::check_layout(beyond), Catch::Contains("reach byte 24 of a 16-byte storage"));
}
