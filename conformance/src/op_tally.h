// op_tally.h — a run's results counted per op, for the summary and the
// matrix: how many cases ran on the device's own code, fell back or failed,
// with the forward forms (contiguous, noncontiguous, inplace, out) apart from
// the gradient cases, so a fallback inside backward never colours the
// forward cells.
#pragma once

#include "case_result.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace loom::conformance {

struct Tally {
  size_t native = 0;    // PASS
  size_t fallback = 0;  // FALLBACK
  size_t failing = 0;   // any failure (FAIL_*, ERROR, CRASH, TIMEOUT)
  size_t untested = 0;  // UNSUPPORTED: the form or the CPU reference does not apply
  // Where the fallbacks were: their dtypes, forms and the ops that fell back.
  std::set<std::string> fallback_dtypes, fallback_variants, fallback_ops;
  // Where the failures were: "float64: FAIL_VALUE" ...
  std::set<std::string> failures;

  size_t tested() const { return native + fallback + failing; }
  void add(const CaseResult& r);
};

struct OpTally {
  Tally forward;                         // every forward case of the op
  Tally grad;                            // its --grad cases
  std::map<std::string, Tally> by_dtype;  // forward cases per dtype
};

// Per op name, sorted.
std::map<std::string, OpTally> tally_by_op(const std::vector<CaseResult>& results);

// What a vendor can act on, one line: "40/48 native, 8 fall back
// (dtypes bool, float16; through 'mul')", "12/12 native", "0/6 native, 6 fall
// back (...), 2 failing (float64: FAIL_VALUE)", "untested (2 cases the CPU
// reference rejects)".
std::string describe(const Tally& t);

}  // namespace loom::conformance
