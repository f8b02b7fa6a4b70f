// summary.cpp — the terminal summary of a run.
#include "expectations.h"
#include "report.h"

#include <array>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>

namespace loom::conformance {
namespace {
std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}
}  // namespace

void print_summary(std::ostream& out, const RunInfo& info, const std::vector<CaseResult>& results) {
  std::array<size_t, kNumStatuses> counts{};
  std::map<Status, std::set<std::string>> ops_by_status;
  size_t expected = 0;
  std::vector<const CaseResult*> unexpected;
  for (const auto& r : results) {
    ++counts[static_cast<size_t>(r.status)];
    if (r.status != Status::Pass && r.status != Status::Unsupported) ops_by_status[r.status].insert(r.op);
    expected += r.expected;
    if (fails_run(r, info.fallback_ok)) unexpected.push_back(&r);
  }
  out << "\nloom-conformance on '" << info.device_type << "': " << results.size() << " cases\n";
  for (int s = 0; s < kNumStatuses; ++s) {
    if (!counts[static_cast<size_t>(s)]) continue;
    out << "  " << std::left << std::setw(12) << to_string(static_cast<Status>(s)) << std::right << std::setw(7)
        << counts[static_cast<size_t>(s)];
    const auto it = ops_by_status.find(static_cast<Status>(s));
    if (it != ops_by_status.end()) out << "  ops: " << joined(it->second);
    out << "\n";
  }
  if (!info.ops_without_samples.empty())
    out << "  " << std::left << std::setw(12) << "NO_SAMPLES" << std::right << std::setw(7)
        << info.ops_without_samples.size() << "  ops (no sample inputs yet, untested)\n";
  if (expected) out << "  " << expected << " result(s) matched the expectations file\n";
  if (unexpected.empty()) {
    out << "result: OK\n";
    return;
  }
  out << "unexpected results (" << unexpected.size() << "):\n";
  constexpr size_t kShown = 30;
  for (size_t i = 0; i < unexpected.size() && i < kShown; ++i) {
    const CaseResult& r = *unexpected[i];
    out << "  " << to_string(r.status) << (is_unexpected_pass(r) ? " (expected " + r.expectation + ")" : "")
        << "  " << r.id << (r.message.empty() ? "" : ": " + r.message) << "\n";
  }
  if (unexpected.size() > kShown) out << "  ... and " << unexpected.size() - kShown << " more (see --report)\n";
  out << "result: FAILED\n";
}

void print_perf(std::ostream& out, const std::vector<CaseResult>& results) {
  out << "\nperf (us per call, GB/s of inputs + outputs):\n";
  out << "  " << std::left << std::setw(60) << "case" << std::right << std::setw(12) << "device us" << std::setw(10)
      << "GB/s" << std::setw(12) << "cpu us" << std::setw(10) << "GB/s" << "\n";
  out << std::fixed << std::setprecision(2);
  for (const auto& r : results) {
    if (std::isnan(r.device_us)) continue;
    out << "  " << std::left << std::setw(60) << r.id << std::right << std::setw(12) << r.device_us << std::setw(10)
        << r.device_gbps << std::setw(12) << r.cpu_us << std::setw(10) << r.cpu_gbps << "\n";
  }
  out.unsetf(std::ios::fixed);
}

}  // namespace loom::conformance
