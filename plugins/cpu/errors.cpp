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

void fail_dtype(const char* op, int32_t dtype) {
  if (dtype >= 0 && dtype < LOOM_DTYPE_COUNT)
    fail(LOOM_STATUS_UNSUPPORTED, "cpu %s: dtype %s is not supported", op,
         plugin::dtype_name(dtype));
  fail(LOOM_STATUS_UNSUPPORTED, "cpu %s: unknown dtype code %d", op, dtype);
}

}  // namespace loom::cpu
