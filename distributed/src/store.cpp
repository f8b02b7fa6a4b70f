// store.cpp — what every Store shares: its timeout.
#include <loom/distributed/store.h>

#include <loom/error.h>

namespace loom::distributed {
namespace {

int64_t checked_timeout_ms(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0)
    throw Error(ErrorKind::InvalidArgument,
                loom::detail::cat("Store: the timeout must be positive, got ", timeout.count(), " ms"));
  return timeout.count();
}

}  // namespace

Store::Store(std::chrono::milliseconds timeout) : timeout_ms_(checked_timeout_ms(timeout)) {}

Store::~Store() = default;

std::chrono::milliseconds Store::timeout() const {
  return std::chrono::milliseconds(timeout_ms_.load(std::memory_order_relaxed));
}

void Store::set_timeout(std::chrono::milliseconds timeout) {
  timeout_ms_.store(checked_timeout_ms(timeout), std::memory_order_relaxed);
}

}  // namespace loom::distributed
