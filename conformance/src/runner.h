// runner.h — one loom-conformance run from parsed options to exit status.
#pragma once

#include "options.h"

namespace loom::conformance {

// Loads the plugins, plans the cases, runs them (in workers unless
// --in-process), applies expectations, writes the reports. Returns the
// process exit status (0 ok, 1 unexpected results, 2 bad setup).
int run_conformance(const Options& options, const std::string& self_exe);

}  // namespace loom::conformance
