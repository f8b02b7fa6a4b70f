// socket.h — the POSIX socket plumbing of TCPStore (internal): an owning fd,
// listen/connect with the messages users see, and I/O with a deadline.
//
// Every socket made here is non-blocking and close-on-exec; every send uses
// MSG_NOSIGNAL, so a peer that went away is an error value, never SIGPIPE.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "messages.h"

namespace loom::distributed::detail {

using Clock = std::chrono::steady_clock;

// Owns one file descriptor and closes it once.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset();

 private:
  int fd_ = -1;
};

// "host:port", "[v6::addr]:port" for an IPv6 literal.
std::string format_address(const std::string& host, uint16_t port);

struct Listener {
  Fd fd;
  uint16_t port = 0;         // the bound port (the kernel's pick for port 0)
  std::string connect_host;  // where a local client reaches it (loopback for a wildcard bind)
};

// Binds host:port (host "" = every interface) with SO_REUSEADDR and listens.
// Throws loom::Error(Device) "TCPStore: cannot listen on host:port: <reason>
// (<hint>)", InvalidArgument when the host does not resolve.
Listener listen_tcp(const std::string& host, uint16_t port);

// Connects to host:port, retrying (resolution included) with a growing pause
// until `timeout` passes; then throws loom::Error(NotFound) "TCPStore: no
// server at host:port after <timeout> (<last reason>); ...".
Fd connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

// Sends / receives exactly n bytes before `deadline`. Return 0, or an errno:
// ETIMEDOUT at the deadline, EPIPE when the peer closed the connection
// (end of file and ECONNRESET included), another errno for other failures.
int send_all(int fd, const uint8_t* data, size_t n, Clock::time_point deadline);
int recv_all(int fd, uint8_t* data, size_t n, Clock::time_point deadline);

// Turns Nagle off: requests and replies are small and latency-bound.
void set_nodelay(int fd);

}  // namespace loom::distributed::detail
