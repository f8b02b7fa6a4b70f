// case_result.h — what one case produced, as reported and as passed from a
// worker process to the runner (one line per result, see encode_result).
#pragma once

#include "status.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace loom::conformance {

struct CaseResult {
  std::string id, op, dtype, variant;
  uint64_t seed = 0;
  std::string shapes;     // input shapes, "[[4,5],[5]]"
  std::string strides;    // input strides on the device, same form
  Status status = Status::Pass;
  double max_abs = 0, max_rel = 0;
  std::string message;
  std::string providers;  // who ran the device side, ", "-joined
  std::string fallbacks;  // the ops that ran through a fallback on the device, ", "-joined
  // --perf: microseconds per call and GB/s (inputs + outputs); NaN when not timed.
  double device_us = NAN, cpu_us = NAN, device_gbps = NAN, cpu_gbps = NAN;
  // Set by the runner from the expectations file.
  bool expected = false;
  std::string expectation;  // the matching line's status and reason
};

// One line (no '\n' inside), and back. decode returns nullopt on a
// malformed line.
std::string encode_result(const CaseResult& r);
std::optional<CaseResult> decode_result(const std::string& line);

}  // namespace loom::conformance
