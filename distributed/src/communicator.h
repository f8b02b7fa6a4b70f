// communicator.h (distributed-internal) — one communication plugin
// communicator (comm_api.h) owned RAII-style, rendezvoused through a host
// Store, and the work handles of the collectives started on it.
#pragma once

#include <loom/comm_api.h>
#include <loom/distributed/distributed.h>
#include <loom/distributed/store.h>
#include <loom/error.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace loom::distributed::detail {

// A message from its parts (loom::detail::cat, reachable from here).
template <class... Args>
std::string cat_op(const Args&... args) {
  return loom::detail::cat(args...);
}

// Throws loom::Error for a plugin's error (releasing it), prefixed by `what`.
void throw_if_error(LoomError* e, const std::string& what);

class Communicator {
 public:
  // Rendezvous of `world_size` ranks through `store` (already scoped to
  // this communicator). `local_address`: where peers reach this process;
  // `device_index`: this rank's device of the plugin's type (its GPU).
  Communicator(const LoomCommPluginInfo& plugin, std::shared_ptr<Store> store, int rank, int world_size,
               std::chrono::milliseconds timeout, const std::string& local_address, int device_index = 0);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  const LoomCommPluginInfo& plugin() const { return plugin_; }
  // After a collective failed (a lost peer, a timeout) the communicator is
  // broken: every pending and later collective must fail promptly rather
  // than wait for its own timeout (the plugin's comm_abort; once; nothing
  // when the plugin has none). Thread-safe.
  void abort();
  bool aborted() const { return aborted_.load(); }
  LoomComm* handle() const { return comm_; }
  const std::shared_ptr<Store>& store() const { return store_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  const LoomCommPluginInfo& plugin_;
  std::shared_ptr<Store> store_;
  LoomCommStore bridge_{};
  LoomComm* comm_ = nullptr;
  std::chrono::milliseconds timeout_;
  std::atomic<bool> aborted_{false};
};

// A started collective: waits through the plugin, then runs `finish` (copy
// a staged output back, divide for an average) once. Keeps what the
// collective reads and writes alive until then.
class PluginWork : public Work {
 public:
  // `diagnose`, when set, is asked once on failure for what to add to the
  // message (the flight recorder's account of the other ranks).
  PluginWork(std::shared_ptr<Communicator> comm, LoomCommWork* handle, std::string what,
             std::function<void()> finish, std::vector<Tensor> keep_alive,
             std::function<std::string()> diagnose = nullptr);
  ~PluginWork() override;
  void wait() override;
  bool is_completed() override;

 private:
  std::shared_ptr<Communicator> comm_;
  LoomCommWork* handle_;
  std::string what_;
  std::function<void()> finish_;
  std::vector<Tensor> keep_alive_;
  std::function<std::string()> diagnose_;
  std::mutex mutex_;
  bool waited_ = false;
  std::string error_;
  int32_t error_code_ = 0;
};

}  // namespace loom::distributed::detail
