// loom/error.h — the one exception type of the C++ API.
//
// Inside C++ loom throws loom::Error; across the plugin ABI the same
// information travels as a LoomError value (status code + message).
#pragma once

#include <loom/plugin_api.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace loom {

// Mirrors LOOM_STATUS_* so an error keeps its kind across the ABI.
enum class ErrorKind : int32_t {
  InvalidArgument = LOOM_STATUS_INVALID_ARGUMENT,
  OutOfMemory = LOOM_STATUS_OUT_OF_MEMORY,
  Unsupported = LOOM_STATUS_UNSUPPORTED,
  NotFound = LOOM_STATUS_NOT_FOUND,
  Device = LOOM_STATUS_DEVICE_ERROR,
  Internal = LOOM_STATUS_INTERNAL,
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  explicit Error(const std::string& message) : Error(ErrorKind::InvalidArgument, message) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// Takes ownership of an error that came across the ABI and throws it as
// loom::Error, prefixed with `context`.
[[noreturn]] void throw_abi_error(LoomError* err, const std::string& context);
}  // namespace detail

}  // namespace loom

// LOOM_CHECK(cond, parts...): throws loom::Error(InvalidArgument) with the
// streamed parts when cond is false.
#define LOOM_CHECK(cond, ...)                                        \
  do {                                                               \
    if (!(cond)) [[unlikely]]                                        \
      throw ::loom::Error(::loom::detail::cat(__VA_ARGS__));         \
  } while (0)
