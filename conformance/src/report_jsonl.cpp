// report_jsonl.cpp — the per-case JSON-lines report.
#include "report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace loom::conformance {
namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// JSON has no NaN / Infinity: null for "not measured", a big number for inf.
std::string json_number(double d) {
  if (std::isnan(d)) return "null";
  if (std::isinf(d)) return d > 0 ? "1e308" : "-1e308";
  std::ostringstream os;
  os.precision(9);
  os << d;
  return os.str();
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string repro_command(const RunInfo& info, const CaseResult& r) {
  return info.repro_prefix + " -o " + r.op + " --case " + shell_quote(r.id);
}

void write_jsonl(std::ostream& out, const RunInfo& info, const std::vector<CaseResult>& results) {
  for (const auto& r : results) {
    out << "{\"id\":" << json_string(r.id) << ",\"op\":" << json_string(r.op)
        << ",\"dtype\":" << json_string(r.dtype) << ",\"variant\":" << json_string(r.variant)
        << ",\"shapes\":" << (r.shapes.empty() ? "null" : r.shapes)
        << ",\"strides\":" << (r.strides.empty() ? "null" : r.strides) << ",\"seed\":" << r.seed
        << ",\"status\":" << json_string(to_string(r.status)) << ",\"expected\":" << (r.expected ? "true" : "false")
        << ",\"expectation\":" << json_string(r.expectation) << ",\"max_abs_error\":" << json_number(r.max_abs)
        << ",\"max_rel_error\":" << json_number(r.max_rel) << ",\"message\":" << json_string(r.message)
        << ",\"providers\":" << json_string(r.providers) << ",\"fallbacks\":" << json_string(r.fallbacks)
        << ",\"device_us\":" << json_number(r.device_us)
        << ",\"cpu_us\":" << json_number(r.cpu_us) << ",\"device_gbps\":" << json_number(r.device_gbps)
        << ",\"cpu_gbps\":" << json_number(r.cpu_gbps) << ",\"repro\":" << json_string(repro_command(info, r))
        << "}\n";
  }
}

void write_jsonl_file(const std::string& path, const RunInfo& info, const std::vector<CaseResult>& results) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write the report '" + path + "'");
  write_jsonl(f, info, results);
}

}  // namespace loom::conformance
