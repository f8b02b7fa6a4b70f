// tcp_store_server.cpp — TCPStore's serving loop (see wire.h for the format).
//
// One thread owns the keys and every socket, so nothing here locks. Sockets
// are non-blocking: a connection's bytes are buffered until a whole frame is
// in, replies are buffered until the peer takes them. A get/wait whose keys
// are missing parks its connection (its later frames wait in the buffer)
// until a set/add supplies the keys or its deadline passes; poll()'s timeout
// is the nearest deadline, so an idle server sleeps.
#include "tcp_store_server.h"

#include "counter.h"
#include "wire.h"

#include <loom/error.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdio>
#include <fcntl.h>
#include <memory>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <unordered_map>

namespace loom::distributed::detail {
namespace {

struct Parked {
  Op op;                              // kGet or kWait
  std::vector<std::string> keys;      // kGet: one
  Clock::time_point deadline;         // max(): none
};

struct Conn {
  Fd fd;
  std::vector<uint8_t> in;  // received, not yet handled
  std::vector<uint8_t> out;  // replies not yet sent
  size_t out_sent = 0;
  std::optional<Parked> parked;
  bool close_after_flush = false;  // a malformed request was answered
  bool dead = false;
};

class Loop {
 public:
  Loop(Fd listen, int wake) : listen_(std::move(listen)), wake_(wake) {}
  void run();

 private:
  void accept_all();
  void read_some(Conn& c);
  void flush(Conn& c);
  bool handle_frames(Conn& c);
  void handle(Conn& c, Reader r);
  void notify();
  void expire(Clock::time_point now);
  bool ready(const Parked& p) const;
  void answer(Conn& c, const Parked& p);
  int poll_timeout_ms(Clock::time_point now) const;

  Fd listen_;
  int wake_;  // the server's stop pipe, read end (owned by TcpStoreServer)
  std::vector<std::unique_ptr<Conn>> conns_;
  std::unordered_map<std::string, std::vector<uint8_t>> data_;
  Clock::time_point accept_paused_until_{};
};

Writer reply(Status s) {
  Writer w;
  w.u8(static_cast<uint8_t>(s));
  return w;
}

void send_reply(Conn& c, Writer w) {
  std::vector<uint8_t> frame = std::move(w).finish();
  c.out.insert(c.out.end(), frame.begin(), frame.end());
}

void Loop::run() {
  std::vector<pollfd> fds;
  for (;;) {
    auto now = Clock::now();
    fds.clear();
    fds.push_back({wake_, POLLIN, 0});
    fds.push_back({listen_.get(), static_cast<short>(now >= accept_paused_until_ ? POLLIN : 0), 0});
    const size_t polled = conns_.size();
    for (const auto& c : conns_)
      fds.push_back({c->fd.get(),
                     static_cast<short>(POLLIN | (c->out.size() > c->out_sent ? POLLOUT : 0)), 0});
    if (::poll(fds.data(), fds.size(), poll_timeout_ms(now)) < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::Internal, loom::detail::cat("poll failed: ", std::strerror(errno)));
    }
    if (fds[0].revents) return;
    if (fds[1].revents & POLLIN) accept_all();
    for (size_t i = 0; i < polled; ++i) {
      Conn& c = *conns_[i];
      const short ev = fds[i + 2].revents;
      if (ev & (POLLIN | POLLHUP | POLLERR)) read_some(c);
      if ((ev & POLLOUT) && !c.dead) flush(c);
    }
    // A set may unpark connections whose buffered frames then go next.
    for (bool progress = true; progress;) {
      progress = false;
      for (auto& c : conns_) progress |= handle_frames(*c);
    }
    expire(Clock::now());
    for (auto& c : conns_)
      if (!c->dead && c->out.size() > c->out_sent) flush(*c);
    std::erase_if(conns_, [](const std::unique_ptr<Conn>& c) { return c->dead; });
  }
}

int Loop::poll_timeout_ms(Clock::time_point now) const {
  Clock::time_point next = Clock::time_point::max();
  if (now < accept_paused_until_) next = accept_paused_until_;
  for (const auto& c : conns_)
    if (c->parked) next = std::min(next, c->parked->deadline);
  if (next == Clock::time_point::max()) return -1;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, INT_MAX));
}

void Loop::accept_all() {
  for (;;) {
    const int fd = ::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      set_nodelay(fd);
      auto c = std::make_unique<Conn>();
      c->fd = Fd(fd);
      conns_.push_back(std::move(c));
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    // Out of descriptors: stop accepting a moment rather than spin on a
    // listening socket that stays readable.
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
      accept_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
    return;  // EAGAIN: all taken
  }
}

void Loop::read_some(Conn& c) {
  uint8_t buf[64 * 1024];
  const ssize_t k = ::recv(c.fd.get(), buf, sizeof buf, MSG_DONTWAIT);
  if (k > 0) {
    c.in.insert(c.in.end(), buf, buf + k);
  } else if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    c.dead = true;  // the client went away; its parked request goes with it
  }
}

void Loop::flush(Conn& c) {
  while (c.out_sent < c.out.size()) {
    const ssize_t k = ::send(c.fd.get(), c.out.data() + c.out_sent, c.out.size() - c.out_sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      c.out_sent += static_cast<size_t>(k);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return;
    } else if (errno != EINTR) {
      c.dead = true;
      return;
    }
  }
  c.out.clear();
  c.out_sent = 0;
  if (c.close_after_flush) c.dead = true;
}

// Handles the complete frames buffered on c while it is not parked; true
// when it handled any.
bool Loop::handle_frames(Conn& c) {
  size_t pos = 0;
  bool any = false;
  while (!c.dead && !c.parked && !c.close_after_flush && c.in.size() - pos >= 4) {
    const uint32_t len = load_u32(c.in.data() + pos);
    if (len > kMaxFrame) {
      send_reply(c, std::move(reply(Status::kError).str("request larger than 1 GiB")));
      c.close_after_flush = true;
      break;
    }
    if (c.in.size() - pos - 4 < len) break;
    try {
      handle(c, Reader(c.in.data() + pos + 4, len));
    } catch (const WireError& e) {
      send_reply(c, std::move(reply(Status::kError).str(std::string("malformed request: ") + e.what())));
      c.close_after_flush = true;
    }
    pos += 4 + size_t(len);
    any = true;
  }
  c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(std::min(pos, c.in.size())));
  return any;
}

Clock::time_point deadline_after(int64_t timeout_ms) {
  if (timeout_ms <= 0) return Clock::time_point::max();
  const auto now = Clock::now();
  const auto left = Clock::time_point::max() - now;
  const auto want = std::chrono::milliseconds(timeout_ms);
  return want >= left ? Clock::time_point::max() : now + want;
}

void Loop::handle(Conn& c, Reader r) {
  const auto op = static_cast<Op>(r.u8());
  switch (op) {
    case Op::kHello: {
      const uint32_t magic = r.u32(), version = r.u32();
      if (magic != kWireMagic || version != kWireVersion) {
        send_reply(c, std::move(reply(Status::kError)
                                     .str(loom::detail::cat("protocol version ", version,
                                                            " not supported (server speaks ",
                                                            kWireVersion, ")"))));
        c.close_after_flush = true;
        return;
      }
      send_reply(c, std::move(reply(Status::kOk).u32(kWireVersion)));
      return;
    }
    case Op::kSet: {
      std::string key = r.str();
      data_[std::move(key)] = r.bytes();
      send_reply(c, reply(Status::kOk));
      notify();
      return;
    }
    case Op::kGet:
    case Op::kWait: {
      Parked p{op, {}, {}};
      if (op == Op::kGet)
        p.keys.push_back(r.str());
      else
        p.keys = r.keys();
      p.deadline = deadline_after(r.i64());
      if (ready(p))
        answer(c, p);
      else
        c.parked = std::move(p);
      return;
    }
    case Op::kAdd: {
      const std::string key = r.str();
      const int64_t delta = r.i64();
      auto it = data_.find(key);
      int64_t value = 0;
      const std::string why = counter_add(it == data_.end() ? nullptr : &it->second, delta, value);
      if (!why.empty()) {
        send_reply(c, std::move(reply(Status::kError).str(why)));
        return;
      }
      data_[key] = counter_bytes(value);
      send_reply(c, std::move(reply(Status::kOk).i64(value)));
      notify();
      return;
    }
    case Op::kCheck: {
      const auto keys = r.keys();
      const bool all = std::all_of(keys.begin(), keys.end(),
                                   [&](const std::string& k) { return data_.count(k) != 0; });
      send_reply(c, std::move(reply(Status::kOk).u8(all ? 1 : 0)));
      return;
    }
    case Op::kDelete: {
      const bool existed = data_.erase(r.str()) != 0;
      send_reply(c, std::move(reply(Status::kOk).u8(existed ? 1 : 0)));
      return;
    }
  }
  throw WireError(loom::detail::cat("unknown request ", int(op)));
}

bool Loop::ready(const Parked& p) const {
  return std::all_of(p.keys.begin(), p.keys.end(),
                     [&](const std::string& k) { return data_.count(k) != 0; });
}

void Loop::answer(Conn& c, const Parked& p) {
  if (p.op == Op::kGet)
    send_reply(c, std::move(reply(Status::kOk).bytes(data_.at(p.keys[0]).data(),
                                                     data_.at(p.keys[0]).size())));
  else
    send_reply(c, reply(Status::kOk));
}

// After a key appeared: answers every parked request it completes.
void Loop::notify() {
  for (auto& c : conns_)
    if (c->parked && !c->dead && ready(*c->parked)) {
      answer(*c, *c->parked);
      c->parked.reset();
    }
}

void Loop::expire(Clock::time_point now) {
  for (auto& c : conns_) {
    if (!c->parked || c->dead || c->parked->deadline > now) continue;
    std::vector<std::string> missing;
    for (const auto& k : c->parked->keys)
      if (!data_.count(k)) missing.push_back(k);
    send_reply(*c, std::move(reply(Status::kTimeout).keys(missing)));
    c->parked.reset();
  }
}

}  // namespace

TcpStoreServer::TcpStoreServer(const std::string& host, uint16_t port) {
  Listener l = listen_tcp(host, port);
  port_ = l.port;
  connect_host_ = l.connect_host;
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(ErrorKind::Device,
                loom::detail::cat("TCPStore: cannot start the server on ", format_address(host, port_),
                                  ": pipe: ", std::strerror(errno)));
  wake_read_ = Fd(p[0]);
  wake_write_ = Fd(p[1]);
  thread_ = std::thread([loop = std::make_shared<Loop>(std::move(l.fd), wake_read_.get()),
                         where = format_address(host, port_)] {
    try {
      loop->run();
    } catch (const std::exception& e) {
      // Its sockets close with the loop: clients fail with "closed the
      // connection" instead of waiting for a server that is gone.
      std::fprintf(stderr, "loom TCPStore: the server at %s stopped: %s\n", where.c_str(), e.what());
    }
  });
}

TcpStoreServer::~TcpStoreServer() {
  const uint8_t byte = 1;
  while (::write(wake_write_.get(), &byte, 1) < 0 && errno == EINTR) {
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace loom::distributed::detail
