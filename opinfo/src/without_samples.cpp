// without_samples.cpp — catalog ops that deliberately have no samples, each
// with the reason (see ops_without_samples in loom/opinfo.h), and the
// functional form an in-place or out= op is covered by.
#include <loom/opinfo.h>

namespace loom::opinfo {

std::string functional_form(const std::string& op) {
  const size_t dot = op.find('.');
  std::string base = op.substr(0, dot);
  std::string overload = dot == std::string::npos ? "" : op.substr(dot);
  if (overload == ".out") return base;
  if (!base.empty() && base.back() == '_') base.pop_back();
  return base + overload;
}

const std::map<std::string, std::string>& ops_without_samples() {
  static const std::map<std::string, std::string> ops = {};
  return ops;
}

}  // namespace loom::opinfo
