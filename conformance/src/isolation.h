// isolation.h — cases in worker processes, so that a crash or a hang costs
// one case, not the run.
//
// The runner re-executes its own binary with `--worker` (plus the run's own
// arguments) for each of -j N workers. A worker loads the plugin, rebuilds
// the same case plan, says "ready", then runs the case indices it is sent
// one at a time, answering each with one encoded CaseResult line. When a
// worker dies of a signal mid-case the case is CRASH; when a case runs past
// the timeout its worker is killed and the case is TIMEOUT; either way a
// fresh worker takes the next case. Pipes are fds 3 (requests) and 4
// (results) in the worker, so the plugin's own stdout / stderr never mix
// with the protocol.
#pragma once

#include "case_result.h"
#include "case_spec.h"

#include <functional>
#include <string>
#include <vector>

namespace loom::conformance {

struct PoolConfig {
  std::string self_exe;                 // this binary (/proc/self/exe)
  std::vector<std::string> worker_args; // the run's arguments, forwarded
  int jobs = 1;
  double timeout_seconds = 10;          // per case
  bool quiet_workers = true;            // send workers' stdout/stderr to /dev/null
};

// Runs every case of `plan` in workers; results come back in plan order.
// `progress(done, total, result)` is called as each case finishes.
std::vector<CaseResult> run_in_workers(const std::vector<CaseSpec>& plan, const PoolConfig& config,
                                       const std::function<void(size_t, size_t, const CaseResult&)>& progress);

// The worker's side: serve case indices from fd 3 until EOF. `run` runs one.
int serve_worker(size_t plan_size, const std::function<CaseResult(size_t)>& run);

// A result for a case that never reported (crash, timeout).
CaseResult result_without_report(const CaseSpec& spec, Status status, const std::string& message);

}  // namespace loom::conformance
