// socket.cpp — see socket.h.
#include "socket.h"

#include <loom/error.h>

#include <algorithm>
#include <cctype>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace loom::distributed::detail {
namespace {

// getaddrinfo's list, freed once.
struct AddrList {
  addrinfo* head = nullptr;
  ~AddrList() {
    if (head) freeaddrinfo(head);
  }
};

// Resolves host:port for a stream socket; returns getaddrinfo's status.
int resolve(const std::string& host, uint16_t port, bool passive, AddrList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  const std::string service = std::to_string(port);
  return getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &out.head);
}

std::string lowercase_first(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

std::string listen_hint(int err) {
  switch (err) {
    case EADDRINUSE:
      return " (is another job using this port? choose another MASTER_PORT)";
    case EADDRNOTAVAIL:
      return " (is it an address of this machine? the server must run where MASTER_ADDR points)";
    case EACCES:
      return " (ports below 1024 need privileges; choose another MASTER_PORT)";
    default:
      return "";
  }
}

bool is_wildcard(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET)
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr == htonl(INADDR_ANY);
  if (a.ss_family == AF_INET6)
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr);
  return false;
}

// Waits for `events` on fd until the deadline: 0, ETIMEDOUT, or poll's errno.
// Error and hang-up conditions return 0: the next send/recv reports them.
int wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ETIMEDOUT;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
    if (r > 0) return 0;
    if (r < 0 && errno != EINTR) return errno;
  }
}

// One non-blocking connect attempt to one address, bounded by the deadline.
// Returns the connected socket, or an empty Fd with `err` set.
Fd try_connect(const addrinfo& ai, Clock::time_point deadline, int& err) {
  Fd fd(::socket(ai.ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) {
    err = errno;
    return {};
  }
  if (::connect(fd.get(), ai.ai_addr, ai.ai_addrlen) == 0) return fd;
  if (errno != EINPROGRESS && errno != EINTR) {
    err = errno;
    return {};
  }
  const int waited = wait_fd(fd.get(), POLLOUT, deadline);
  int so_error = 0;
  socklen_t len = sizeof so_error;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len) != 0) so_error = errno;
  if (so_error != 0 || waited != 0) {
    err = so_error != 0 ? so_error : waited;  // a refusal that came in time says more
    return {};
  }
  return fd;
}

// A connect to a local port nobody listens on can, when the kernel picks
// that same port as the ephemeral source, connect the socket to itself (TCP
// simultaneous open); retrying for minutes makes that likely enough to check.
bool connected_to_self(int fd) {
  sockaddr_storage self{}, peer{};
  socklen_t self_len = sizeof self, peer_len = sizeof peer;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &self_len) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0)
    return false;
  return self_len == peer_len && std::memcmp(&self, &peer, self_len) == 0;
}

}  // namespace

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string format_address(const std::string& host, uint16_t port) {
  if (host.find(':') != std::string::npos) return loom::detail::cat('[', host, "]:", port);
  return loom::detail::cat(host.empty() ? "0.0.0.0" : host, ':', port);
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // best effort
}

Listener listen_tcp(const std::string& host, uint16_t port) {
  const std::string where = format_address(host, port);
  AddrList addrs;
  if (const int rc = resolve(host, port, /*passive=*/true, addrs))
    throw Error(ErrorKind::InvalidArgument,
                loom::detail::cat("TCPStore: cannot listen on ", where, ": cannot resolve host '", host,
                            "': ", gai_strerror(rc)));
  // IPv4 first: "localhost" then binds 127.0.0.1, which every client reaches.
  std::vector<const addrinfo*> order;
  for (const addrinfo* ai = addrs.head; ai; ai = ai->ai_next) order.push_back(ai);
  std::stable_partition(order.begin(), order.end(),
                        [](const addrinfo* ai) { return ai->ai_family == AF_INET; });
  int err = EADDRNOTAVAIL;
  for (const addrinfo* ai : order) {
    Fd fd(::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      err = errno;
      continue;
    }
    // A restarted job may rebind the port while the last one's connections
    // sit in TIME_WAIT.
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd.get(), SOMAXCONN) != 0) {
      err = errno;
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
      err = errno;
      continue;
    }
    Listener l;
    l.port = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in&>(bound).sin_port
                                              : reinterpret_cast<sockaddr_in6&>(bound).sin6_port);
    if (is_wildcard(bound)) {
      l.connect_host = bound.ss_family == AF_INET ? "127.0.0.1" : "::1";
    } else {
      char text[INET6_ADDRSTRLEN] = {};
      const void* a = bound.ss_family == AF_INET
                          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in&>(bound).sin_addr)
                          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6&>(bound).sin6_addr);
      l.connect_host = ::inet_ntop(bound.ss_family, a, text, sizeof text) ? text : host;
    }
    l.fd = std::move(fd);
    return l;
  }
  throw Error(ErrorKind::Device, loom::detail::cat("TCPStore: cannot listen on ", where, ": ",
                                             std::strerror(err), listen_hint(err)));
}

Fd connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(10);
  std::string last = "connection timed out";
  bool have_reason = false;
  for (;;) {
    AddrList addrs;
    if (const int rc = resolve(host, port, /*passive=*/false, addrs)) {
      // Retried too: a cluster's DNS name may appear after the job starts.
      last = loom::detail::cat("cannot resolve host '", host, "': ", gai_strerror(rc));
      have_reason = true;
    } else {
      for (const addrinfo* ai = addrs.head; ai; ai = ai->ai_next) {
        int err = 0;
        Fd fd = try_connect(*ai, deadline, err);
        if (fd && connected_to_self(fd.get())) {
          fd.reset();
          err = ECONNREFUSED;
        }
        if (fd) {
          set_nodelay(fd.get());
          return fd;
        }
        // An attempt cut short by the deadline keeps the reason before it.
        if (err != ETIMEDOUT || !have_reason) last = lowercase_first(std::strerror(err));
        have_reason = true;
      }
    }
    const auto now = Clock::now();
    if (now >= deadline)
      throw Error(ErrorKind::NotFound,
                  loom::detail::cat("TCPStore: no server at ", format_address(host, port), " after ",
                              format_duration(timeout), " (", last,
                              "); is rank 0 running and MASTER_ADDR/MASTER_PORT right?"));
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
}

int send_all(int fd, const uint8_t* data, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    const ssize_t k = ::send(fd, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      data += k;
      n -= static_cast<size_t>(k);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (const int e = wait_fd(fd, POLLOUT, deadline)) return e;
    } else if (errno != EINTR) {
      return errno == ECONNRESET ? EPIPE : errno;
    }
  }
  return 0;
}

int recv_all(int fd, uint8_t* data, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    const ssize_t k = ::recv(fd, data, n, MSG_DONTWAIT);
    if (k > 0) {
      data += k;
      n -= static_cast<size_t>(k);
    } else if (k == 0) {
      return EPIPE;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (const int e = wait_fd(fd, POLLIN, deadline)) return e;
    } else if (errno != EINTR) {
      return errno == ECONNRESET ? EPIPE : errno;
    }
  }
  return 0;
}

}  // namespace loom::distributed::detail
