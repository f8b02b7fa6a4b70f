// summary.cpp — the terminal summary of a run.
#include "expectations.h"
#include "op_tally.h"
#include "report.h"

#include <array>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <algorithm>

namespace loom::conformance {
namespace {

// "a, b, c" with at most `shown` names, then "and N more".
std::string joined(const std::set<std::string>& s, size_t shown = 12) {
  std::string out;
  size_t n = 0;
  for (const auto& x : s) {
    if (n++ == shown) break;
    out += (out.empty() ? "" : ", ") + x;
  }
  if (s.size() > shown) out += " and " + std::to_string(s.size() - shown) + " more";
  return out;
}

bool all_native(const Tally& t) { return t.tested() > 0 && t.native == t.tested(); }

// One line per op that a vendor has something to do about (a fallback or a
// failure, forward or gradient); the all-native ops on one line.
void print_per_op(std::ostream& out, const std::vector<CaseResult>& results) {
  const auto tallies = tally_by_op(results);
  std::set<std::string> native_ops, untested_ops;
  size_t width = 0;
  for (const auto& [op, t] : tallies) width = std::max(width, op.size() + 7);  // "grad " + op + 2
  std::ostringstream lines;
  for (const auto& [op, t] : tallies) {
    const bool grad_ok = t.grad.tested() == 0 || all_native(t.grad);
    if (t.forward.tested() == 0 && t.grad.tested() == 0) {
      untested_ops.insert(op);
      continue;
    }
    if ((t.forward.tested() == 0 || all_native(t.forward)) && grad_ok) {
      native_ops.insert(op);
      continue;
    }
    if (t.forward.tested() && !all_native(t.forward))
      lines << "  " << std::left << std::setw(static_cast<int>(width)) << op << std::right << describe(t.forward)
            << "\n";
    if (!grad_ok)
      lines << "  " << std::left << std::setw(static_cast<int>(width)) << ("grad " + op) << std::right
            << describe(t.grad) << "\n";
  }
  out << "per op (cases native / tested):\n";
  if (!native_ops.empty()) out << "  all native (" << native_ops.size() << "): " << joined(native_ops, 40) << "\n";
  out << lines.str();
  if (!untested_ops.empty())
    out << "  untested (the CPU reference rejects every case): " << joined(untested_ops, 40) << "\n";
}

}  // namespace

void print_summary(std::ostream& out, const RunInfo& info, const std::vector<CaseResult>& results) {
  std::array<size_t, kNumStatuses> counts{};
  std::map<Status, std::set<std::string>> ops_by_status;
  size_t expected = 0;
  std::vector<const CaseResult*> unexpected;
  for (const auto& r : results) {
    ++counts[static_cast<size_t>(r.status)];
    ops_by_status[r.status].insert(r.op);
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
  print_per_op(out, results);
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
