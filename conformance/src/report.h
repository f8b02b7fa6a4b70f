// report.h — what a run tells its user: a JSON-lines file, a terminal
// summary and a Markdown op x dtype matrix.
#pragma once

#include "case_result.h"

#include <ostream>
#include <string>
#include <vector>

namespace loom::conformance {

struct RunInfo {
  std::string device_type;
  std::string repro_prefix;  // "loom-conformance --device sim --plugin x.json"
  bool fallback_ok = true;
  std::vector<std::string> ops_without_samples;
};

// The one-line command that reruns one case.
std::string repro_command(const RunInfo& info, const CaseResult& r);

// One JSON object a line: id, op, dtype, variant, shapes, strides, seed,
// status, expected, max_abs_error, max_rel_error, message, providers,
// timings (--perf), repro.
void write_jsonl(std::ostream& out, const RunInfo& info, const std::vector<CaseResult>& results);
void write_jsonl_file(const std::string& path, const RunInfo& info, const std::vector<CaseResult>& results);

// Counts per status, the ops that fail or fall back, unexpected results.
void print_summary(std::ostream& out, const RunInfo& info, const std::vector<CaseResult>& results);
// --perf: one line per timed case.
void print_perf(std::ostream& out, const std::vector<CaseResult>& results);

// op x dtype: ✅ native / 🟡 fallback / ❌ failing / blank untested.
void write_matrix(std::ostream& out, const RunInfo& info, const std::vector<CaseResult>& results);
void write_matrix_file(const std::string& path, const RunInfo& info, const std::vector<CaseResult>& results);

}  // namespace loom::conformance
