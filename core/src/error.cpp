// error.cpp — turning ABI error values into loom::Error, and printing.
#include <loom/error.h>
#include <loom/scalar.h>

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
