// LOOM_PLUGIN_DEBUG tracing.
#include "detail.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace loom::registry {

namespace {
// -1: follow the environment; 0/1: forced by set_debug.
std::atomic<int> g_forced{-1};

std::mutex& log_mutex() {
  // Leaked so that tracing from static destructors of other libraries
  // still finds a live mutex.
  static auto* mu = new std::mutex;
  return *mu;
}
}  // namespace

void set_debug(bool on) { g_forced.store(on ? 1 : 0, std::memory_order_relaxed); }

bool debug_enabled() {
  int forced = g_forced.load(std::memory_order_relaxed);
  if (forced >= 0) return forced != 0;
  const char* v = std::getenv("LOOM_PLUGIN_DEBUG");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

namespace detail {

void debug(const std::string& message) noexcept {
  if (!debug_enabled()) return;
  // One stdio call per line, under a lock, so lines from concurrent loads
  // do not interleave.
  std::lock_guard<std::mutex> lock(log_mutex());
  std::size_t start = 0;
  while (true) {
    std::size_t end = message.find('\n', start);
    std::size_t len = (end == std::string::npos ? message.size() : end) - start;
    std::fprintf(stderr, "[loom plugin] %.*s\n", static_cast<int>(len), message.data() + start);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  std::fflush(stderr);
}

}  // namespace detail
}  // namespace loom::registry
