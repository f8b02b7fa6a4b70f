// messages.h — how the stores' error messages spell durations and key lists
// (internal), so every store says them alike.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace loom::distributed::detail {

// "300 ms", "5 s", "1.5 s".
inline std::string format_duration(std::chrono::milliseconds d) {
  const auto ms = d.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  std::string frac = std::to_string(ms % 1000 + 1000).substr(1);  // three digits
  while (frac.back() == '0') frac.pop_back();
  return std::to_string(ms / 1000) + "." + frac + " s";
}

// "'a', 'b' and 3 more": the first 8 keys, quoted.
inline std::string quoted_keys(const std::vector<std::string>& keys) {
  std::string out;
  const size_t shown = keys.size() < 8 ? keys.size() : 8;
  for (size_t i = 0; i < shown; ++i) out += (i ? ", '" : "'") + keys[i] + "'";
  if (keys.size() > shown) out += " and " + std::to_string(keys.size() - shown) + " more";
  return out;
}

}  // namespace loom::distributed::detail
