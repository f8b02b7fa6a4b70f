// matrix.cpp — the op x dtype Markdown table for a backend's docs.
#include "op_tally.h"
#include "report.h"

#include <loom/dtype.h>

#include <fstream>
#include <set>
#include <stdexcept>

namespace loom::conformance {
namespace {

// ✅ every case native; 🟡 fallbacks (with "n/m" native of tested where some
// ran natively); ❌ a failure (with the same count); blank: nothing tested.
std::string cell(const Tally& t) {
  if (t.tested() == 0) return "";
  const std::string count = std::to_string(t.native) + "/" + std::to_string(t.tested());
  if (t.failing) return "❌ " + count;
  if (t.fallback) return t.native ? "🟡 " + count : "🟡";
  return "✅";
}

}  // namespace

void write_matrix(std::ostream& out, const RunInfo& info, const std::vector<CaseResult>& results) {
  const auto tallies = tally_by_op(results);
  std::set<std::string> seen;
  bool grad = false;
  for (const auto& r : results) {
    if (r.variant == "grad") grad = true;
    else seen.insert(r.dtype);
  }
  std::vector<std::string> dtypes;  // in the ABI's dtype order
  for (int code = 0; code < kNumDTypes; ++code) {
    const std::string n(name(static_cast<DType>(code)));
    if (seen.count(n)) dtypes.push_back(n);
  }
  out << "# loom-conformance: `" << info.device_type << "`\n\n"
      << "✅ native · 🟡 through a fallback (n/m: n of the m cases native) · ❌ failing (n/m native) · "
         "blank: untested"
      << (grad ? " · grad: forward + backward, every dtype" : "") << "\n\n| op |";
  for (const auto& d : dtypes) out << " " << d << " |";
  if (grad) out << " grad |";
  out << "\n|---|";
  for (size_t i = 0; i < dtypes.size() + (grad ? 1 : 0); ++i) out << ":-:|";
  out << "\n";
  for (const auto& [op, t] : tallies) {
    out << "| `" << op << "` |";
    for (const auto& d : dtypes) {
      auto it = t.by_dtype.find(d);
      out << " " << (it == t.by_dtype.end() ? "" : cell(it->second)) << " |";
    }
    if (grad) out << " " << cell(t.grad) << " |";
    out << "\n";
  }
  if (!info.ops_without_samples.empty()) {
    out << "\nNo samples yet (untested): ";
    for (size_t i = 0; i < info.ops_without_samples.size(); ++i)
      out << (i ? ", " : "") << "`" << info.ops_without_samples[i] << "`";
    out << "\n";
  }
}

void write_matrix_file(const std::string& path, const RunInfo& info, const std::vector<CaseResult>& results) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write the matrix '" + path + "'");
  write_matrix(f, info, results);
}

}  // namespace loom::conformance
