// fallback_ops.cpp — see fallback_ops.h.
#include "fallback_ops.h"

#include <loom/op_registry.h>

#include <algorithm>
#include <sstream>

namespace loom::conformance {

std::string fallen_back_ops(const DispatchTrace& trace, int slot) {
  std::string out;
  for (const auto& e : trace.events()) {
    if (e.path != DispatchPath::Fallback || e.device_type != slot) continue;
    const std::string& name = e.op->name();
    if ((", " + out + ", ").find(", " + name + ", ") != std::string::npos) continue;
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

std::string fallback_reasons(const DispatchTrace& trace, int slot) {
  std::vector<std::string> seen;
  for (const auto& e : trace.events()) {
    if (e.path != DispatchPath::Fallback || e.device_type != slot || e.why.empty()) continue;
    if (std::find(seen.begin(), seen.end(), e.why) == seen.end()) seen.push_back(e.why);
  }
  std::string out;
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < seen.size() && i < kShown; ++i) out += (i ? "; " : "") + seen[i];
  if (seen.size() > kShown) out += "; and " + std::to_string(seen.size() - kShown) + " more";
  return out;
}

std::vector<std::string> split_ops(const std::string& ops) {
  std::vector<std::string> out;
  std::istringstream in(ops);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (!name.empty() && name[0] == ' ') name.erase(0, 1);
    if (!name.empty()) out.push_back(name);
  }
  return out;
}

std::string quoted_list(const std::string& ops) {
  std::string out;
  for (const auto& name : split_ops(ops)) out += (out.empty() ? "'" : ", '") + name + "'";
  return out;
}

}  // namespace loom::conformance
