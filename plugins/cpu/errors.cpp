// The cold path of every kernel check in common.hpp: format, then throw.
// Out of line so checks inline to a compare and a call.
#include "common.hpp"

#include <cstdarg>
#include <cstdio>

namespace loom::cpu {

void fail(int32_t code, const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  throw plugin::Failure(code, buf);
}

void fail_dtype(const char* op, int32_t dtype) { plugin::fail_unsupported_dtype("cpu", op, dtype); }

}  // namespace loom::cpu
