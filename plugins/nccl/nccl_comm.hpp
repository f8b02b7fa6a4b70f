// An NCCL communicator (comm_api.h's LoomComm): one rank's GPU and a
// non-blocking ncclComm_t, made through the host's store.
//
// Non-blocking (ncclConfig_t.blocking = 0) because a blocking communicator
// cannot be left: a collective whose peer died spins on the GPU, and every
// NCCL call on that communicator waits behind it. A non-blocking one returns
// ncclInProgress instead of waiting, so each wait here is a poll with a
// deadline, and ncclCommAbort ends what is stuck — a lost peer is an error
// after the timeout at most, never a hang.
//
// Every NCCL call on the communicator holds `mutex_` (NCCL does not allow
// two threads in one communicator at once, and ncclCommAbort frees it); the
// CUDA events that mark a collective's end are queried without it.
#pragma once

#include <loom/comm_api.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace loom::nccl_plugin {

// Now plus `ms` milliseconds (at most a year, so that no timeout overflows).
std::chrono::steady_clock::time_point deadline_after(int64_t ms);

// Throws a plugin::Failure naming `what` and CUDA's text, unless `e` is
// cudaSuccess.
void check_cuda(cudaError_t e, const std::string& what);

// Makes `device` the calling thread's CUDA device for a scope, and puts the
// previous one back when the thread had one: the current device is the
// driver's, shared with the CUDA plugin, which remembers per thread what it
// set and would otherwise launch its next kernel on this GPU.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1, device_ = -1;
};

// Pauses of a polling loop: a few yields first (a small collective ends
// within microseconds), then sleeps growing to 1 ms.
class Backoff {
 public:
  void pause();

 private:
  int rounds_ = 0;
};

class Comm {
 public:
  // Rendezvous (rank 0's ncclUniqueId through the store) and
  // ncclCommInitRankConfig on config.device_index; returns once every rank
  // joined, or throws plugin::Failure naming what is missing after the
  // timeout.
  explicit Comm(const LoomCommConfig& config);
  // Finalizes and destroys the communicator (aborts it when that does not
  // complete); comm_api.h: no work of it is pending.
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // Runs `calls` (NCCL calls on the communicator; returns the last one's
  // result) with this rank's GPU current, waits until the non-blocking
  // communicator has queued them on `stream`, and records a new event there
  // that marks their end (the caller destroys it with destroy_event).
  // Throws naming `what` when NCCL fails (the communicator is then aborted,
  // unless the error is about the arguments) or the timeout passes.
  cudaEvent_t issue(const std::string& what, const std::function<ncclResult_t(ncclComm_t)>& calls, cudaStream_t stream);
  void destroy_event(cudaEvent_t event) noexcept;

  // Why the communicator failed (an asynchronous NCCL error, which aborts
  // it, or an earlier abort), or "" while it is healthy. Never blocks for
  // long: for polling while a collective runs.
  std::string failure();
  // Aborts the communicator (ncclCommAbort): the collectives running on it
  // end and every later one fails with `why`. Thread-safe; a second call
  // does nothing.
  void abort(const std::string& why);
  bool aborted() const { return aborted_.load(); }

  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }
  int64_t timeout_ms() const { return timeout_ms_; }
  // One float on this rank's GPU: barrier's all_reduce.
  void* scratch() const { return scratch_; }
  // "rank 0 of 2 (cuda:0)", for messages.
  std::string where() const;

 private:
  // Polls ncclCommGetAsyncError while it says ncclInProgress; returns the
  // state, or ncclInProgress when `deadline` passed or an abort was
  // requested first. mutex_ held.
  ncclResult_t wait_ready_locked(std::chrono::steady_clock::time_point deadline);
  void abort_locked(const std::string& why);
  // NCCL's name and text for `r`, plus the communicator's last error.
  std::string describe_locked(ncclResult_t r) const;

  int rank_ = 0, size_ = 1, device_ = 0;
  int64_t timeout_ms_ = 0;
  void* scratch_ = nullptr;
  mutable std::mutex mutex_;
  ncclComm_t nccl_ = nullptr;  // null once aborted
  std::atomic<bool> aborted_{false};
  std::atomic<bool> abort_requested_{false};  // lets a poll holding mutex_ give way to abort()
  std::string abort_reason_;                  // mutex_
};

}  // namespace loom::nccl_plugin
