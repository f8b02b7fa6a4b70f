// compare.h — one result against its CPU reference.
//
// Tolerances follow PyTorch's assert_close (rtol / atol): float16 1e-3 /
// 1e-5, bfloat16 1.6e-2 / 1e-5, float32 1.3e-6 / 1e-5, float64 1e-7 / 1e-7;
// a sample's own atol / rtol (given for float32) replaces float32's and is
// scaled by the default ratio for the half types. Integer and bool results
// compare exactly. NaN equals NaN; an infinity must match exactly.
#pragma once

#include "status.h"

#include <loom/opinfo.h>
#include <loom/tensor.h>

#include <string>

namespace loom::conformance {

struct Tolerance {
  double rtol = 0, atol = 0;
};
// The tolerance for `dtype`, given a sample's float32 overrides (0 = none)
// and whether the op accumulates in the dtype (OpSamples::accumulates).
Tolerance tolerance_for(DType dtype, double sample_atol = 0, double sample_rtol = 0, bool accumulates = false);
// The tolerance for a result of `result_dtype` in a case of `case_dtype`: the
// case's, except that an integer or bool case with a floating result (sin of
// int8, atan2 of int32) is float math, compared within the result dtype's
// tolerance (devices' libm functions differ by an ulp or two).
Tolerance result_tolerance(DType case_dtype, DType result_dtype, double sample_atol = 0, double sample_rtol = 0,
                           bool accumulates = false);

struct Comparison {
  Status status = Status::Pass;  // Pass, FailValue, FailDType or FailShape
  double max_abs = 0, max_rel = 0;
  std::string message;           // empty on a pass
};

// `actual` may live on any device; `expected` is the CPU reference.
Comparison compare(const Tensor& actual, const Tensor& expected, opinfo::Compare mode,
                   Tolerance tol);

// Strides a result may have: non-negative, and every element inside its
// storage. Returns an explanation when not.
std::string check_layout(const Tensor& t);

}  // namespace loom::conformance
