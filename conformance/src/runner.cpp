// runner.cpp — the parent side of a run (and the entry of a worker).
#include "runner.h"

#include "execute.h"
#include "expectations.h"
#include "fused_cases.h"
#include "isolation.h"
#include "report.h"

#include <loom/did_you_mean.h>
#include <loom/op_registry.h>

#include <loom/loom.h>
#include <loom/registry.h>

#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace loom::conformance {
namespace {

Device resolve_device(const Options& o) {
  for (const auto& p : o.plugins) {
    std::string why;
    if (!registry::Registry::global().load(p, why))
      throw std::runtime_error("cannot load plugin '" + p + "': " + why);
  }
  try {
    return Device(o.device);
  } catch (const std::exception& e) {
    throw std::runtime_error("device type '" + o.device + "' is not available: " + e.what());
  }
}

// " (did you mean 'add'?)" for a near miss among the catalog's names, or "".
std::string suggestion_for(const std::string& name) {
  std::vector<std::string> names;
  for (const OpDef* op : Dispatcher::instance().ops()) names.push_back(op->name());
  return did_you_mean(name, names);
}

// Why a run would have no case, for its error.
std::string nothing_selected(const CaseFilter& f, const CasePlan& plan) {
  std::string what = f.ops.empty() ? "every op" : "-o";
  for (size_t i = 0; i < f.ops.size(); ++i) what += (i ? "," : " ") + f.ops[i];
  if (!f.case_glob.empty()) what += " with --case '" + f.case_glob + "'";
  std::string s = what + " selects no case";
  if (!plan.ops_without_samples.empty()) {
    std::string names;
    for (const auto& n : plan.ops_without_samples) names += (names.empty() ? "" : ", ") + n;
    s += " (ops without sample inputs, so untested: " + names + ")";
  }
  for (const auto& [inplace, functional] : plan.inplace_of)
    s += "; " + inplace + " runs as the inplace cases of " + functional + ": -o " + functional + " --case '*/inplace'";
  if (!f.case_glob.empty()) s += "; case IDs are op/sample/dtype/variant: --list without --case shows them";
  return s;
}

std::string repro_prefix(const Options& o) {
  std::string s = "loom-conformance --device " + o.device;
  for (const auto& p : o.plugins) s += " --plugin " + p;
  if (o.filter.grad) s += " --grad";
  if (o.filter.tier == Tier::Full) s += " --full";
  return s;
}

}  // namespace

int run_conformance(const Options& o, const std::string& self_exe) {
  // Plugins' fallback warnings would flood the output: the trace reports them.
  set_fallback_policy(FallbackPolicy::Allow);
  const Device device = resolve_device(o);
  CaseFilter filter = o.filter;
  filter.device_slot = device.type;
  const CasePlan plan = plan_cases(filter);
  if (!plan.unknown_ops.empty()) {
    std::string names;
    for (const auto& n : plan.unknown_ops) names += (names.empty() ? "" : ", ") + n + suggestion_for(n);
    throw UsageError("-o names ops the catalog does not have: " + names);
  }
  if (plan.cases.empty() && !o.worker) throw UsageError(nothing_selected(filter, plan));
  CaseExecutor executor({device, o.perf, o.perf_min_seconds});
  if (o.worker)
    return serve_worker(plan.cases.size(), [&](size_t i) { return executor.run(plan.cases[i]); });
  if (o.list) {
    for (const auto& c : plan.cases) std::cout << c.id << "\n";
    return 0;
  }
  std::vector<Expectation> expectations;
  if (!o.expect.empty()) expectations = load_expectations(o.expect);

  const bool tty = ::isatty(STDOUT_FILENO);
  auto progress = [&](size_t done, size_t total, const CaseResult& r) {
    if (!tty) return;
    std::string id = r.id.size() > 60 ? r.id.substr(0, 57) + "..." : r.id;
    std::printf("\r\033[K[%zu/%zu] %-11s %s", done, total, to_string(r.status), id.c_str());
    std::fflush(stdout);
  };
  std::vector<CaseResult> results;
  if (o.in_process) {
    for (size_t i = 0; i < plan.cases.size(); ++i) {
      results.push_back(executor.run(plan.cases[i]));
      progress(i + 1, plan.cases.size(), results.back());
    }
  } else {
    PoolConfig pool{self_exe, o.args, o.jobs, o.timeout_seconds, !o.verbose};
    results = run_in_workers(plan.cases, pool, progress);
  }
  if (tty) std::printf("\r\033[K");

  RunInfo info{device.type_name(), repro_prefix(o), !o.no_fallback_ok, plan.ops_without_samples};
  bool failed = false;
  for (auto& r : results) {
    apply_expectations(expectations, r);
    failed |= fails_run(r, info.fallback_ok);
  }
  if (!o.report.empty()) write_jsonl_file(o.report, info, results);
  if (!o.matrix.empty()) write_matrix_file(o.matrix, info, results);
  if (o.perf) print_perf(std::cout, results);
  print_summary(std::cout, info, results);
  // A whole-device run also offers random fused regions (a -o or --case run
  // is about those ops).
  if (o.fused_cases > 0 && filter.ops.empty() && filter.case_glob.empty()) {
    const FusedReport fused = run_fused_cases(device, o.fused_cases);
    print_fused_report(std::cout, device.str(), fused);
    failed |= fused.failed();
  }
  return failed ? 1 : 0;
}

}  // namespace loom::conformance
