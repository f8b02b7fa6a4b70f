// execute.h — running one case in this process: the device run under a
// DispatchTrace, the CPU reference, the comparison.
#pragma once

#include "case_result.h"
#include "case_spec.h"

#include <loom/device.h>
#include <loom/opinfo.h>

#include <map>
#include <utility>
#include <vector>

namespace loom::conformance {

struct ExecConfig {
  Device device;
  bool perf = false;
  double perf_min_seconds = 0.02;  // per side, after warm-up
};

class CaseExecutor {
 public:
  explicit CaseExecutor(ExecConfig config) : config_(config) {}
  // Never throws: whatever goes wrong becomes the result's status.
  CaseResult run(const CaseSpec& spec);

 private:
  const std::vector<opinfo::Sample>& samples_for(const CaseSpec& spec);
  ExecConfig config_;
  std::map<std::pair<std::string, DType>, std::vector<opinfo::Sample>> cache_;
};

}  // namespace loom::conformance
