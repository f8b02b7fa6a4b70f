// A gloo communicator (comm_api.h's LoomComm): a gloo rendezvous context
// over TCP, connected through the host's store, and one worker thread that
// runs the communicator's collectives in the order they were started —
// gloo's algorithms are blocking, and every rank must run them in the same
// order, so one thread per communicator is both the asynchrony the ABI asks
// for and the ordering it promises.
#pragma once

#include <loom/comm_api.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace gloo::rendezvous {
class Context;
}

namespace loom::gloo_plugin {

class ShmGroup;

// A started collective: done once the worker ran it; `error` non-empty when
// it failed.
class Work {
 public:
  ~Work();  // joins the waiter thread, if any
  void finish(int32_t code, std::string error);
  // A thread that completes this work (point-to-point ops); joined when the
  // work is destroyed, which comm_api.h allows only once it is complete.
  void adopt(std::thread waiter) { waiter_ = std::move(waiter); }
  // Waits at most timeout_ms (< 0: forever); false on timeout.
  bool wait(int64_t timeout_ms);
  bool done();
  // The result once done: nullptr or a fresh LoomError.
  LoomError* result();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  int32_t code_ = 0;
  std::string error_;
  std::thread waiter_;
};

class Comm {
 public:
  // Rendezvous and full-mesh connect; throws plugin::Failure naming what
  // failed (the store, a peer, the timeout).
  explicit Comm(const LoomCommConfig& config);
  ~Comm();  // stops the worker after the queued work

  // Queues `run` (which throws to fail) as the work `what`; the returned
  // Work is shared with the worker.
  std::shared_ptr<Work> start(std::string what, std::function<void()> run);
  // Runs `run` on the calling thread when nothing is queued or running
  // (then returns its finished work), else queues it as start() does.
  std::shared_ptr<Work> run_now_if_idle(std::string what, std::function<void()> run);
  void abort();

  const std::shared_ptr<gloo::rendezvous::Context>& context() const { return context_; }
  // Same-host shared-memory collectives (shm_group.hpp), or nullptr: the
  // ranks are on several hosts, or it is switched off or unavailable.
  ShmGroup* shm() const { return shm_.get(); }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // The collectives' timeout: the host's, or 30 minutes when it set none.
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  void worker_loop();
  void execute(const std::string& what, const std::function<void()>& run, Work& work);
  std::shared_ptr<Work> enqueue_locked(std::string what, std::function<void()> run);  // mutex_ held

  int rank_ = 0, size_ = 1;
  int64_t timeout_ms_ = 0;  // as the host gave it (0: none)
  std::chrono::milliseconds timeout_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::unique_ptr<ShmGroup> shm_;
  std::mutex mutex_;
  std::condition_variable cv_;
  struct Job {
    std::string what;
    std::function<void()> run;
    std::shared_ptr<Work> work;
  };
  std::deque<Job> queue_;
  bool stopping_ = false;
  bool aborted_ = false;
  bool busy_ = false;  // a job runs (on the worker or a caller's thread)
  std::thread worker_;
};

}  // namespace loom::gloo_plugin
