// status.cpp — names of the case statuses.
#include "status.h"

#include <array>

namespace loom::conformance {
namespace {
constexpr std::array<const char*, kNumStatuses> kNames = {
    "PASS", "FAIL_VALUE", "FAIL_DTYPE", "FAIL_SHAPE", "ERROR", "CRASH", "TIMEOUT", "FALLBACK", "UNSUPPORTED"};
}  // namespace

const char* to_string(Status s) { return kNames[static_cast<size_t>(s)]; }

std::optional<Status> parse_status(std::string_view text) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (text == kNames[i]) return static_cast<Status>(i);
  return std::nullopt;
}

bool is_failure(Status s, bool fallback_ok) {
  switch (s) {
    case Status::Pass:
    case Status::Unsupported: return false;
    case Status::Fallback: return !fallback_ok;
    default: return true;
  }
}

}  // namespace loom::conformance
