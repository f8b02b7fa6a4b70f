// result_codec.cpp — CaseResult <-> one tab-separated line, the worker
// protocol (fields escaped so that messages may hold any text).
#include "case_result.h"

#include <cstdlib>
#include <sstream>
#include <vector>

namespace loom::conformance {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
  }
  return out;
}

std::string num(double d) {
  std::ostringstream os;
  os.precision(17);
  os << d;
  return os.str();
}

constexpr size_t kFields = 17;

}  // namespace

std::string encode_result(const CaseResult& r) {
  const std::string fields[kFields] = {
      r.id, r.op, r.dtype, r.variant, std::to_string(r.seed), r.shapes, r.strides, to_string(r.status),
      num(r.max_abs), num(r.max_rel), r.message, r.providers, num(r.device_us), num(r.cpu_us),
      num(r.device_gbps), num(r.cpu_gbps), r.fallbacks};
  std::string line;
  for (size_t i = 0; i < kFields; ++i) line += (i ? "\t" : "") + escape(fields[i]);
  return line;
}

std::optional<CaseResult> decode_result(const std::string& line) {
  std::vector<std::string> f;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == '\t') {
      f.push_back(unescape(line.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (f.size() != kFields) return std::nullopt;
  auto status = parse_status(f[7]);
  if (!status) return std::nullopt;
  CaseResult r;
  r.id = f[0], r.op = f[1], r.dtype = f[2], r.variant = f[3];
  r.seed = std::strtoull(f[4].c_str(), nullptr, 10);
  r.shapes = f[5], r.strides = f[6], r.status = *status;
  r.max_abs = std::strtod(f[8].c_str(), nullptr), r.max_rel = std::strtod(f[9].c_str(), nullptr);
  r.message = f[10], r.providers = f[11];
  r.device_us = std::strtod(f[12].c_str(), nullptr), r.cpu_us = std::strtod(f[13].c_str(), nullptr);
  r.device_gbps = std::strtod(f[14].c_str(), nullptr), r.cpu_gbps = std::strtod(f[15].c_str(), nullptr);
  r.fallbacks = f[16];
  return r;
}

}  // namespace loom::conformance
