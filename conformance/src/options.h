// options.h — the command line of loom-conformance.
#pragma once

#include "case_spec.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace loom::conformance {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string device;                // --device (required)
  std::vector<std::string> plugins;  // --plugin, repeatable
  CaseFilter filter;                 // -o, --case, --quick / --full, --grad
  bool perf = false;
  double perf_min_seconds = 0.02;
  int jobs = 1;
  double timeout_seconds = 10;
  std::string report, matrix, expect;
  bool no_fallback_ok = false;
  bool in_process = false;  // no workers: for debugging a case under gdb
  bool verbose = false;     // workers keep their stdout / stderr
  int fused_cases = 24;     // --fused-cases: random fused regions per dtype (0: none)
  bool list = false;        // print the case IDs and exit
  bool help = false;
  bool worker = false;      // internal: serve cases to a runner
  std::vector<std::string> args;  // the arguments as given (forwarded to workers)
};

// Throws UsageError naming the bad argument.
Options parse_options(int argc, const char* const* argv);
const char* usage_text();

}  // namespace loom::conformance
