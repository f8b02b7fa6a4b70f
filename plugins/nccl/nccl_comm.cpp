// Comm, DeviceGuard and Backoff (nccl_comm.hpp).
#include "nccl_comm.hpp"

#include <loom/plugin.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <thread>

namespace loom::nccl_plugin {
namespace {

using Clock = std::chrono::steady_clock;

// Where rank 0 leaves the communicator's ncclUniqueId; the host's store is
// already scoped to this communicator.
constexpr const char* kUniqueIdKey = "nccl/unique_id";
// comm_api.h gives every communicator a timeout; 0 means none was given:
// PyTorch's default then, as the host's.
constexpr int64_t kDefaultTimeoutMs = 30 * 60 * 1000;
// How long a clean shutdown may take before the communicator is aborted:
// finalizing waits for the peers' side of in-flight transfers, and a peer
// that is gone never answers.
constexpr int64_t kFinalizeMs = 10 * 1000;

const char* result_name(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return "ncclResult_t";
  }
}

bool is_argument_error(ncclResult_t r) { return r == ncclInvalidArgument || r == ncclInvalidUsage; }

// Whether the calling thread has a current CUDA context, from the driver's
// cuCtxGetCurrent (looked up at run time: the plugin links no libcuda; the
// runtime loaded it before any guard runs). cudaGetDevice cannot tell: it
// says 0 on a thread without a context, and setting 0 "back" would make a
// context on GPU 0 in every rank's process.
bool thread_has_context() {
  using CtxGetCurrent = int (*)(void**);
  static const CtxGetCurrent get = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    return lib ? reinterpret_cast<CtxGetCurrent>(dlsym(lib, "cuCtxGetCurrent")) : nullptr;
  }();
  void* context = nullptr;
  return !get || (get(&context) == 0 && context != nullptr);  // unknown: assume one, restore as before
}

}  // namespace

Clock::time_point deadline_after(int64_t ms) {
  constexpr int64_t kLongest = int64_t{365} * 24 * 3600 * 1000;  // a year: "no timeout", without overflow
  return Clock::now() + std::chrono::milliseconds(std::clamp<int64_t>(ms, 0, kLongest));
}

void check_cuda(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // clear the sticky slot so the next call is not blamed
  throw plugin::Failure(e == cudaErrorMemoryAllocation ? LOOM_STATUS_OUT_OF_MEMORY : LOOM_STATUS_DEVICE_ERROR,
                        "nccl: " + what + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
}

DeviceGuard::DeviceGuard(int device) : device_(device) {
  // Without a context there is nothing to restore (and the CUDA plugin has
  // set no device on this thread yet): `device` stays current.
  if (thread_has_context()) check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device_) check_cuda(cudaSetDevice(device_), "cudaSetDevice(" + std::to_string(device_) + ")");
}

DeviceGuard::~DeviceGuard() {
  if (previous_ != device_ && previous_ >= 0) (void)cudaSetDevice(previous_);
}

void Backoff::pause() {
  ++rounds_;
  if (rounds_ <= 64) {
    std::this_thread::yield();
    return;
  }
  const int us = std::min(1000, 10 << std::min(rounds_ - 64, 7));  // 20 us ... 1 ms
  std::this_thread::sleep_for(std::chrono::microseconds(us));
}

Comm::Comm(const LoomCommConfig& config)
    : rank_(config.rank),
      size_(config.world_size),
      device_(config.device_index),
      timeout_ms_(config.timeout_ms > 0 ? config.timeout_ms : kDefaultTimeoutMs) {
  if (!config.store) throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, "nccl: comm_create without a store");
  if (size_ < 1 || rank_ < 0 || rank_ >= size_)
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, "nccl: rank " + std::to_string(rank_) +
                                                            " is not in a world of size " + std::to_string(size_));
  int gpus = 0;
  check_cuda(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount");
  if (device_ < 0 || device_ >= gpus)
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT,
                          "nccl: rank " + std::to_string(rank_) + " is to use cuda:" + std::to_string(device_) +
                              ", but this process sees " + std::to_string(gpus) +
                              " GPU(s) (the host picks the GPU from LOCAL_RANK: one rank per GPU)");

  // Rendezvous: rank 0 makes the id (NCCL's bootstrap address) and every
  // other rank waits for it in the store.
  const LoomCommStore& store = *config.store;
  ncclUniqueId id{};
  if (rank_ == 0) {
    if (const ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
      throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR, std::string("nccl: ncclGetUniqueId failed on rank 0: ") +
                                                          ncclGetErrorString(r) + " (" + result_name(r) + ")");
    plugin::throw_if_error(store.set(store.host_data, kUniqueIdKey, &id, sizeof id));
  } else {
    void* data = nullptr;
    size_t size = 0;
    plugin::throw_if_error(store.get(store.host_data, kUniqueIdKey, &data, &size));
    const bool ok = size == sizeof id;
    if (ok) std::memcpy(&id, data, sizeof id);
    if (data) store.free_value(store.host_data, data);
    if (!ok)
      throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT,
                            "nccl: rank " + std::to_string(rank_) + " read a " + std::to_string(size) +
                                "-byte communicator id from the store, not an ncclUniqueId (" +
                                std::to_string(sizeof id) + " bytes): do all ranks use the nccl backend?");
  }

  std::lock_guard<std::mutex> lock(mutex_);
  DeviceGuard on(device_);
  check_cuda(cudaMalloc(&scratch_, sizeof(float)), "cudaMalloc (barrier scratch, " + where() + ")");
  check_cuda(cudaMemset(scratch_, 0, sizeof(float)), "cudaMemset (barrier scratch)");
  ncclConfig_t nccl_config = NCCL_CONFIG_INITIALIZER;
  nccl_config.blocking = 0;
  ncclResult_t r = ncclCommInitRankConfig(&nccl_, size_, id, rank_, &nccl_config);
  if (r == ncclInProgress || (r == ncclSuccess && nccl_)) r = wait_ready_locked(deadline_after(timeout_ms_));
  if (r != ncclSuccess) {
    const std::string why = r == ncclInProgress ? "not every rank joined within " + std::to_string(timeout_ms_) +
                                                      " ms (each rank calls init_process_group, on a GPU of its own)"
                                                : describe_locked(r);
    if (nccl_) abort_locked(why);
    (void)cudaFree(scratch_);
    throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR, "nccl: " + where() + " could not create its communicator: " + why);
  }
}

Comm::~Comm() {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (nccl_) {
      DeviceGuard on(device_);
      ncclResult_t r = ncclCommFinalize(nccl_);
      if (r == ncclSuccess || r == ncclInProgress)
        r = wait_ready_locked(deadline_after(std::min(timeout_ms_, kFinalizeMs)));
      if (r == ncclSuccess) {
        (void)ncclCommDestroy(nccl_);
        nccl_ = nullptr;
      } else {
        abort_locked("the communicator was destroyed");
      }
    }
    if (scratch_) {
      DeviceGuard on(device_);
      (void)cudaFree(scratch_);
    }
  } catch (...) {
    // A destructor reports nothing: what failed here failed at the end of
    // the program, after every collective's result was known.
  }
}

std::string Comm::where() const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " (cuda:" + std::to_string(device_) + ")";
}

ncclResult_t Comm::wait_ready_locked(Clock::time_point deadline) {
  Backoff backoff;
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(nccl_, &state);
    if (r != ncclSuccess) return r;
    if (state != ncclInProgress) return state;
    if (abort_requested_.load() || Clock::now() >= deadline) return ncclInProgress;
    backoff.pause();
  }
}

std::string Comm::describe_locked(ncclResult_t r) const {
  std::string text = std::string(ncclGetErrorString(r)) + " (" + result_name(r) + ")";
  const char* last = nccl_ ? ncclGetLastError(nccl_) : ncclGetLastError(nullptr);
  if (last && *last) text += ": " + std::string(last);
  return text;
}

void Comm::abort_locked(const std::string& why) {
  if (aborted_.load()) return;
  abort_reason_ = why;
  if (nccl_) {
    try {
      DeviceGuard on(device_);
      (void)ncclCommAbort(nccl_);
    } catch (...) {
      (void)ncclCommAbort(nccl_);  // on whatever device is current: better than leaving it running
    }
    nccl_ = nullptr;
  }
  aborted_.store(true);
}

void Comm::abort(const std::string& why) {
  abort_requested_.store(true);
  std::lock_guard<std::mutex> lock(mutex_);
  abort_locked(why);
}

std::string Comm::failure() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_.load()) return "the communicator was aborted: " + abort_reason_;
  ncclResult_t state = ncclSuccess;
  ncclResult_t r = ncclCommGetAsyncError(nccl_, &state);
  if (r == ncclSuccess) r = state;
  if (r == ncclSuccess || r == ncclInProgress) return "";
  const std::string why = describe_locked(r);
  abort_locked(why);
  return why + "; the communicator was aborted";
}

cudaEvent_t Comm::issue(const std::string& what, const std::function<ncclResult_t(ncclComm_t)>& calls,
                        cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_.load())
    throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR, "nccl " + what + " on " + where() +
                                                        ": the communicator was aborted earlier (" + abort_reason_ +
                                                        "); make a new process group");
  DeviceGuard on(device_);
  ncclResult_t r = calls(nccl_);
  if (r == ncclInProgress) r = wait_ready_locked(deadline_after(timeout_ms_));
  if (r == ncclInProgress) {
    const std::string why = abort_requested_.load()
                                ? std::string("the communicator was aborted while the collective was queued")
                                : "NCCL did not queue it within " + std::to_string(timeout_ms_) +
                                      " ms (the timeout: a peer may be lost or stuck)";
    abort_locked(why);
    throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR,
                          "nccl " + what + " on " + where() + ": " + why + "; the communicator was aborted");
  }
  if (r != ncclSuccess) {
    const std::string why = describe_locked(r);
    if (is_argument_error(r))  // the communicator is fine: only this call was wrong
      throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, "nccl " + what + " on " + where() + ": " + why);
    abort_locked(why);
    throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR,
                          "nccl " + what + " failed on " + where() + ": " + why + "; the communicator was aborted");
  }
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate (" + what + ")");
  if (const cudaError_t e = cudaEventRecord(event, stream); e != cudaSuccess) {
    (void)cudaEventDestroy(event);
    check_cuda(e, "cudaEventRecord (" + what + ")");
  }
  return event;
}

void Comm::destroy_event(cudaEvent_t event) noexcept {
  if (!event) return;
  try {
    DeviceGuard on(device_);
    (void)cudaEventDestroy(event);
  } catch (...) {
    (void)cudaEventDestroy(event);
  }
}

}  // namespace loom::nccl_plugin
