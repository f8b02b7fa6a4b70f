// counter.h — add()'s counters, shared by the stores (internal): a counter's
// value is the decimal ASCII text of an int64, as PyTorch's stores keep it.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::distributed::detail {

// Adds delta to the counter held in `old` (null: a missing key, 0) into
// `out`. Returns "" on success, else why not (for a message that names the
// key around it).
inline std::string counter_add(const std::vector<uint8_t>* old, int64_t delta, int64_t& out) {
  int64_t value = 0;
  if (old) {
    const char* first = reinterpret_cast<const char*>(old->data());
    const char* last = first + old->size();
    const auto [end, ec] = std::from_chars(first, last, value);
    if (old->empty() || ec != std::errc() || end != last)
      return "its value is not a decimal integer (a key used as a counter must be written by add only)";
  }
  if (__builtin_add_overflow(value, delta, &out))
    return "the counter would overflow int64 (" + std::to_string(value) + " + " +
           std::to_string(delta) + ")";
  return "";
}

inline std::vector<uint8_t> counter_bytes(int64_t value) {
  const std::string text = std::to_string(value);
  return {text.begin(), text.end()};
}

}  // namespace loom::distributed::detail
