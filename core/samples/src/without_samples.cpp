// without_samples.cpp — catalog ops that deliberately have no samples, each
// with the reason (see ops_without_samples in loom/op_samples.h).
#include <loom/op_samples.h>

namespace loom::samples {

const std::map<std::string, std::string>& ops_without_samples() {
  static const std::map<std::string, std::string> ops = {};
  return ops;
}

}  // namespace loom::samples
