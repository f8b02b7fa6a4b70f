// error.cpp — turning ABI error values into loom::Error, and printing.
#include "plugin_call.h"

#include <loom/error.h>
#include <loom/scalar.h>

#include <cxxabi.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <new>

namespace loom {

namespace detail {
void throw_abi_error(LoomError* err, const std::string& context) {
  std::string msg = err->message ? err->message : "(no message)";
  auto kind = static_cast<ErrorKind>(err->code);
  if (err->code < LOOM_STATUS_INVALID_ARGUMENT || err->code > LOOM_STATUS_INTERNAL)
    kind = ErrorKind::Internal;
  if (err->destroy) err->destroy(err);
  throw Error(kind, context.empty() ? msg : context + ": " + msg);
}

namespace {
// The demangled type of the exception being handled (g++/clang runtimes).
std::string current_exception_type() {
  const std::type_info* t = abi::__cxa_current_exception_type();
  if (!t) return "(unknown type)";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(t->name(), nullptr, nullptr, &status),
                                              std::free);
  return status == 0 && name ? name.get() : t->name();
}

// The kind and message for the exception being handled.
std::pair<ErrorKind, std::string> describe_plugin_exception(const std::string& context) {
  const std::string prefix = context + " threw a C++ exception across the plugin ABI (plugins must "
                                       "return a LoomError; see plugin::guard)";
  try {
    throw;
  } catch (const Error& e) {
    return {e.kind(), cat(prefix, ": ", e.what())};
  } catch (const std::bad_alloc& e) {
    return {ErrorKind::OutOfMemory, cat(prefix, ": std::bad_alloc: ", e.what())};
  } catch (const std::exception& e) {
    return {ErrorKind::Internal, cat(prefix, ": ", current_exception_type(), ": ", e.what())};
  } catch (...) {
    return {ErrorKind::Internal,
            cat(prefix, " of non-standard type ", current_exception_type())};
  }
}
}  // namespace

void rethrow_plugin_exception(const std::string& context) {
  auto [kind, msg] = describe_plugin_exception(context);
  throw Error(kind, msg);
}

void report_plugin_exception(const std::string& context) noexcept {
  try {
    std::cerr << "loom: error: " << describe_plugin_exception(context).second
              << " (ignored: it happened while releasing a resource)\n";
  } catch (...) {
    // Reporting must not throw out of a destructor; nothing more to do.
  }
}
}  // namespace detail

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return os << (s.to_int() ? "True" : "False");
    case Scalar::Kind::Int: return os << s.to_int();
    case Scalar::Kind::Float: return os << s.to_double();
  }
  return os;
}

}  // namespace loom
