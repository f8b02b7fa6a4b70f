// status.h — what became of one conformance case.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace loom::conformance {

enum class Status {
  Pass,         // the device's own code matched the CPU reference
  FailValue,    // values differ beyond the dtype's tolerance
  FailDType,    // the result has another dtype than the reference
  FailShape,    // another shape, or strides that leave the storage
  Error,        // the device run threw while the CPU reference succeeded
  Crash,        // the worker died of a signal during the case
  Timeout,      // the case ran past --timeout
  Fallback,     // correct, but some op of the case ran through a fallback on the device
  Unsupported,  // the CPU reference itself rejects the dtype / sample (or the form does not apply)
};

const char* to_string(Status s);  // "PASS", "FAIL_VALUE", ...
std::optional<Status> parse_status(std::string_view text);
inline constexpr int kNumStatuses = 9;

// Whether a status breaks a run that has no expectation for it.
// FALLBACK is fine unless `fallback_ok` is false (--no-fallback-ok).
bool is_failure(Status s, bool fallback_ok);

}  // namespace loom::conformance
