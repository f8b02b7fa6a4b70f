// fallback_ops.h — which ops of a traced case ran through a fallback.
#pragma once

#include <loom/dispatch_trace.h>

#include <string>
#include <vector>

namespace loom::conformance {

// The distinct ops the trace saw fall back on device slot `slot`, in first
// occurrence order, ", "-joined ("copy_, matmul"); "" when none did.
std::string fallen_back_ops(const DispatchTrace& trace, int slot);
// Why they fell back, as the dispatcher said it (no kernel, no kernel for
// the dtype, or the kernel's own reason for declining): the distinct
// reasons, "; "-joined, at most three.
std::string fallback_reasons(const DispatchTrace& trace, int slot);
// "copy_, matmul" -> {"copy_", "matmul"}.
std::vector<std::string> split_ops(const std::string& ops);
// "copy_, matmul" -> "'copy_', 'matmul'", for messages.
std::string quoted_list(const std::string& ops);

}  // namespace loom::conformance
