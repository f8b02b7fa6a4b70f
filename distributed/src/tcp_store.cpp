// tcp_store.cpp — TCPStore's client side, and the server's start (see
// tcp_store_server.cpp for the loop, wire.h for the format).
#include <loom/distributed/store.h>

#include "socket.h"
#include "tcp_store_server.h"
#include "wire.h"

#include <loom/error.h>

#include <cstring>
#include <mutex>

namespace loom::distributed {
namespace detail {

// How long past a get/wait's own timeout a client waits for the server's
// answer before it calls the server unresponsive (the server answers a
// timed-out request itself, at the deadline).
constexpr std::chrono::milliseconds kReplyGrace{std::chrono::seconds(5)};

// Reserved keys of world_size's join (see join()).
const std::string kJoinCountKey = "__loom_tcpstore/workers";
const std::string kJoinDoneKey = "__loom_tcpstore/all_workers_joined";

// Idle connections to the server; a call takes one (or opens one) for
// itself and gives it back once the server has answered it.
struct TcpClientPool {
  std::string host;  // where to connect (the server's own client: its bound address)
  uint16_t port = 0;
  std::mutex mu;
  std::vector<Fd> idle;
};

}  // namespace detail

namespace {

using detail::Clock;
using detail::Fd;
using detail::Op;
using detail::Reader;
using detail::Status;
using detail::Writer;
using detail::quoted_keys;

// The finished request of call `what`; a too large one is the caller's error.
std::vector<uint8_t> frame(Writer w, const std::string& what) {
  try {
    return std::move(w).finish();
  } catch (const detail::WireError& e) {
    throw Error(ErrorKind::InvalidArgument, "TCPStore: " + what + ": " + e.what());
  }
}

void check_timeout(std::chrono::milliseconds t, const char* what) {
  if (t.count() <= 0)
    throw Error(ErrorKind::InvalidArgument,
                loom::detail::cat("TCPStore: ", what, ": the timeout must be positive, got ",
                                  t.count(), " ms"));
}

// Sends one request frame on fd and reads the reply's body before the
// deadline; throws Device naming the server and the call on any failure.
std::vector<uint8_t> round_trip(int fd, const std::vector<uint8_t>& request,
                                Clock::time_point deadline, std::chrono::milliseconds waited,
                                const std::string& address, const std::string& what) {
  auto fail = [&](int err) -> Error {
    if (err == EPIPE)
      return Error(ErrorKind::Device, loom::detail::cat("TCPStore: the server at ", address,
                                                        " closed the connection (during ", what,
                                                        "); did the rank 0 process exit or crash?"));
    if (err == ETIMEDOUT)
      return Error(ErrorKind::Device,
                   loom::detail::cat("TCPStore: no reply from the server at ", address, " to ",
                                     what, " within ", detail::format_duration(waited),
                                     " (is the rank 0 process stopped or overloaded?)"));
    return Error(ErrorKind::Device, loom::detail::cat("TCPStore: lost the connection to the server at ",
                                                      address, " during ", what, ": ",
                                                      std::strerror(err)));
  };
  if (const int e = detail::send_all(fd, request.data(), request.size(), deadline)) throw fail(e);
  uint8_t head[4];
  if (const int e = detail::recv_all(fd, head, 4, deadline)) throw fail(e);
  const uint32_t len = detail::load_u32(head);
  if (len == 0 || len > detail::kMaxFrame)
    throw Error(ErrorKind::Device, loom::detail::cat("TCPStore: the server at ", address,
                                                     " sent a malformed reply to ", what));
  std::vector<uint8_t> body(len);
  if (const int e = detail::recv_all(fd, body.data(), len, deadline)) throw fail(e);
  return body;
}

std::string error_text(const std::vector<uint8_t>& body) {
  try {
    Reader r(body.data() + 1, body.size() - 1);
    return r.str();
  } catch (const detail::WireError&) {
    return "(no reason given)";
  }
}

// Connects (retrying until `timeout`) and shakes hands, so that what answers
// is known to be a TCPStore server of this wire version.
Fd open_connection(const detail::TcpClientPool& pool, const std::string& address,
                   std::chrono::milliseconds timeout) {
  Fd fd = detail::connect_tcp(pool.host, pool.port, timeout);
  const auto hello = frame(
      std::move(Writer().u8(uint8_t(Op::kHello)).u32(detail::kWireMagic).u32(detail::kWireVersion)),
      "connect");
  const auto body = round_trip(fd.get(), hello, Clock::now() + timeout, timeout, address, "connect");
  if (body[0] != uint8_t(Status::kOk))
    throw Error(ErrorKind::Device,
                loom::detail::cat("TCPStore: the server at ", address, " refused the connection: ",
                                  error_text(body), "; do all ranks run the same loom version?"));
  return fd;
}

}  // namespace

TCPStore::TCPStore(std::string host, uint16_t port, bool is_server, std::chrono::milliseconds timeout,
                   int world_size)
    : Store(timeout), host_(std::move(host)), port_(port), pool_(std::make_unique<detail::TcpClientPool>()) {
  if (is_server) {
    server_ = std::make_unique<detail::TcpStoreServer>(host_, port_);
    port_ = server_->port();
    pool_->host = server_->connect_host();
  } else {
    if (host_.empty())
      throw Error(ErrorKind::InvalidArgument,
                  "TCPStore: a client needs the server's host (MASTER_ADDR), got an empty one");
    if (port_ == 0)
      throw Error(ErrorKind::InvalidArgument,
                  loom::detail::cat("TCPStore: a client needs the server's port (MASTER_PORT); port 0 "
                                    "only lets a server pick a free one (host ",
                                    host_, ")"));
    pool_->host = host_;
  }
  pool_->port = port_;
  address_ = detail::format_address(host_, port_);
  // Connect now: a missing server shows here, not at the first get.
  Fd first = open_connection(*pool_, address_, this->timeout());
  pool_->idle.push_back(std::move(first));
  if (world_size > 0) join(world_size);
}

TCPStore::~TCPStore() = default;

// Every store counts itself in; the one that completes the count marks it
// done, which is what the server waits for (parked, not polled).
void TCPStore::join(int world_size) {
  if (add(detail::kJoinCountKey, 1) == world_size) set(detail::kJoinDoneKey, {1});
  if (!server_) return;
  try {
    wait({detail::kJoinDoneKey}, timeout());
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::NotFound) throw;
    throw Error(ErrorKind::NotFound,
                loom::detail::cat("TCPStore: only ", add(detail::kJoinCountKey, 0), " of ", world_size,
                                  " workers joined within ", detail::format_duration(timeout()),
                                  " (store at ", address_,
                                  "); did every rank start with the same world size and "
                                  "MASTER_ADDR/MASTER_PORT?"));
  }
}

// One request on a connection of its own; `wait` is how long the server may
// legitimately take to answer. Returns the reply body from its status on,
// having thrown for kError.
std::vector<uint8_t> TCPStore::call(const std::vector<uint8_t>& request, std::chrono::milliseconds wait,
                                    const std::string& what) {
  Fd fd;
  {
    std::lock_guard<std::mutex> lock(pool_->mu);
    if (!pool_->idle.empty()) {
      fd = std::move(pool_->idle.back());
      pool_->idle.pop_back();
    }
  }
  if (!fd) fd = open_connection(*pool_, address_, timeout());
  // A failure on the way throws with fd, which closes: a connection in an
  // unknown state never goes back to the pool.
  std::vector<uint8_t> body = round_trip(fd.get(), request, Clock::now() + wait, wait, address_, what);
  {
    std::lock_guard<std::mutex> lock(pool_->mu);
    pool_->idle.push_back(std::move(fd));
  }
  if (body[0] == uint8_t(Status::kError))
    throw Error(ErrorKind::InvalidArgument, loom::detail::cat("TCPStore: ", what, ": ", error_text(body),
                                                              " (store at ", address_, ")"));
  return body;
}

void TCPStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  const std::string what = "set('" + key + "')";
  call(frame(std::move(Writer().u8(uint8_t(Op::kSet)).str(key).bytes(value.data(), value.size())), what),
       timeout(), what);
}

std::vector<uint8_t> TCPStore::get(const std::string& key) {
  const std::string what = "get('" + key + "')";
  const auto t = timeout();
  // The server answers by the deadline; the grace only covers a stuck server.
  auto body = call(frame(std::move(Writer().u8(uint8_t(Op::kGet)).str(key).i64(t.count())), what),
                   t + detail::kReplyGrace, what);
  if (body[0] == uint8_t(Status::kTimeout))
    throw Error(ErrorKind::NotFound, loom::detail::cat("TCPStore: key '", key, "' not set within ",
                                                       detail::format_duration(t), " (store at ",
                                                       address_, ")"));
  try {
    Reader r(body.data() + 1, body.size() - 1);
    return r.bytes();
  } catch (const detail::WireError&) {
    throw Error(ErrorKind::Device, loom::detail::cat("TCPStore: the server at ", address_,
                                                     " sent a malformed reply to ", what));
  }
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  const std::string what = loom::detail::cat("add('", key, "', ", delta, ")");
  auto body = call(frame(std::move(Writer().u8(uint8_t(Op::kAdd)).str(key).i64(delta)), what), timeout(),
                   what);
  try {
    Reader r(body.data() + 1, body.size() - 1);
    return r.i64();
  } catch (const detail::WireError&) {
    throw Error(ErrorKind::Device, loom::detail::cat("TCPStore: the server at ", address_,
                                                     " sent a malformed reply to ", what));
  }
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  const std::string what = "check(" + quoted_keys(keys) + ")";
  auto body = call(frame(std::move(Writer().u8(uint8_t(Op::kCheck)).keys(keys)), what), timeout(), what);
  return body.size() > 1 && body[1] != 0;
}

void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  check_timeout(timeout, "wait");
  const std::string what = "wait(" + quoted_keys(keys) + ")";
  auto body = call(frame(std::move(Writer().u8(uint8_t(Op::kWait)).keys(keys).i64(timeout.count())), what),
                   timeout + detail::kReplyGrace, what);
  if (body[0] != uint8_t(Status::kTimeout)) return;
  std::vector<std::string> missing;
  try {
    Reader r(body.data() + 1, body.size() - 1);
    missing = r.keys();
  } catch (const detail::WireError&) {
    missing = keys;
  }
  throw Error(ErrorKind::NotFound,
              loom::detail::cat("TCPStore: ", missing.size() == 1 ? "key " : "keys ", quoted_keys(missing),
                                " not set within ", detail::format_duration(timeout), " (store at ",
                                address_, ")"));
}

bool TCPStore::delete_key(const std::string& key) {
  const std::string what = "delete_key('" + key + "')";
  auto body = call(frame(std::move(Writer().u8(uint8_t(Op::kDelete)).str(key)), what), timeout(), what);
  return body.size() > 1 && body[1] != 0;
}

}  // namespace loom::distributed
