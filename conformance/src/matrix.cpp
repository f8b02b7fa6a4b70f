// matrix.cpp — the op x dtype Markdown table for a backend's docs.
#include "report.h"

#include <loom/dtype.h>

#include <fstream>
#include <map>
#include <stdexcept>

namespace loom::conformance {
namespace {

// Worst first: one failing case makes the cell failing, one fallback
// (and no failure) makes it fallback. UNSUPPORTED cases leave it untested.
enum class Cell { Untested, Native, Fallback, Failing };

Cell cell_of(Status s) {
  switch (s) {
    case Status::Pass: return Cell::Native;
    case Status::Fallback: return Cell::Fallback;
    case Status::Unsupported: return Cell::Untested;
    default: return Cell::Failing;
  }
}

const char* symbol(Cell c) {
  switch (c) {
    case Cell::Native: return "✅";
    case Cell::Fallback: return "🟡";
    case Cell::Failing: return "❌";
    default: return "";
  }
}

}  // namespace

void write_matrix(std::ostream& out, const RunInfo& info, const std::vector<CaseResult>& results) {
  std::map<std::string, std::map<std::string, Cell>> cells;  // op -> dtype -> cell
  std::map<std::string, bool> dtype_seen;
  for (const auto& r : results) {
    Cell& c = cells[r.op][r.dtype];
    c = std::max(c, cell_of(r.status));
    dtype_seen[r.dtype] = true;
  }
  std::vector<std::string> dtypes;  // in the ABI's dtype order
  for (int code = 0; code < kNumDTypes; ++code) {
    const std::string n(name(static_cast<DType>(code)));
    if (dtype_seen.count(n)) dtypes.push_back(n);
  }
  out << "# loom-conformance: `" << info.device_type << "`\n\n"
      << "✅ native · 🟡 CPU fallback · ❌ failing · blank: untested\n\n| op |";
  for (const auto& d : dtypes) out << " " << d << " |";
  out << "\n|---|";
  for (size_t i = 0; i < dtypes.size(); ++i) out << ":-:|";
  out << "\n";
  for (const auto& [op, row] : cells) {
    out << "| `" << op << "` |";
    for (const auto& d : dtypes) {
      auto it = row.find(d);
      out << " " << (it == row.end() ? "" : symbol(it->second)) << " |";
    }
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
