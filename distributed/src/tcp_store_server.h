// tcp_store_server.h — the server side of TCPStore (internal): one thread
// that owns the keys and serves every connection with poll().
#pragma once

#include "socket.h"

#include <cstdint>
#include <string>
#include <thread>

namespace loom::distributed::detail {

class TcpStoreServer {
 public:
  // Listens on host:port (see listen_tcp for the errors) and starts the
  // serving thread.
  TcpStoreServer(const std::string& host, uint16_t port);
  // Stops the thread and closes every socket; clients see their connection
  // closed.
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  uint16_t port() const { return port_; }
  // Where a client on this machine reaches the server.
  const std::string& connect_host() const { return connect_host_; }

 private:
  uint16_t port_;
  std::string connect_host_;
  // A byte written here stops the thread. Both ends live as long as this
  // object, so the write never meets a closed pipe (SIGPIPE), even when the
  // thread has already stopped on an error.
  Fd wake_read_;
  Fd wake_write_;
  std::thread thread_;
};

}  // namespace loom::distributed::detail
