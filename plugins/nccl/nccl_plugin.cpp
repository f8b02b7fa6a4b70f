// The nccl communication plugin (comm_api.h): collectives on cuda tensors
// with NVIDIA's NCCL. Every LOOM_COMM_* op (all_to_all, gather and scatter
// as grouped sends and receives), every loom dtype but int16; a collective
// runs on the stream the host passes (LoomCollective.stream: the tensors'
// current stream), and its work is a CUDA event recorded after it there.
// Waiting polls that event and the communicator's asynchronous error until
// done, failed or past the timeout — then the communicator is aborted, so
// a lost peer is an error, never a hang (nccl_comm.hpp).
#include "nccl_call.hpp"
#include "nccl_comm.hpp"

#include <loom/comm_api.h>
#include <loom/plugin.hpp>
#include <loom/plugin/comm_op_name.hpp>

#include "vendor/gpu_runtime.hpp"  // the CUDA plugin's driver check

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

// The name and the tensors' device type: "nccl" and "cuda", except in the
// test build against a stub runtime in host memory (tests/), which is the
// backend "nccl_stub" for cpu tensors.
#if defined(LOOM_NCCL_STUB_RUNTIME)
#define LOOM_NCCL_NAME "nccl_stub"
#define LOOM_NCCL_DEVICE_TYPE "cpu"
#else
#define LOOM_NCCL_NAME "nccl"
#define LOOM_NCCL_DEVICE_TYPE "cuda"
#endif

namespace loom::nccl_plugin {
namespace {

using Clock = std::chrono::steady_clock;

// After an abort, how long a wait still gives the collective's kernels to
// stop, so that memory the host frees next is no longer written.
constexpr auto kDrainAfterAbort = std::chrono::seconds(2);

// A started collective: the event after it on its stream, and its result
// once known.
struct Work {
  Comm* comm = nullptr;
  cudaEvent_t event = nullptr;
  std::string what;  // "all_reduce (sequence 3)"
  std::mutex mutex;
  bool done = false;
  int32_t code = 0;
  std::string error;  // empty: succeeded
};

// Queries the event with the communicator's GPU current (so that a thread
// without a CUDA context does not make one on GPU 0).
cudaError_t query(const Work& w) {
  DeviceGuard on(w.comm->device());
  return cudaEventQuery(w.event);
}

void finish(Work& w, int32_t code, std::string error) {
  w.done = true;
  w.code = code;
  w.error = std::move(error);
}

// Gives the kernels of an aborted collective a moment to stop.
void drain(const Work& w) {
  const auto until = Clock::now() + kDrainAfterAbort;
  Backoff backoff;
  while (query(w) == cudaErrorNotReady && Clock::now() < until) backoff.pause();
  (void)cudaGetLastError();
}

// One look at the work: true once it is done (succeeded or failed).
// w.mutex held.
bool poll(Work& w) {
  if (w.done) return true;
  const cudaError_t q = query(w);
  if (q == cudaSuccess) {
    // An abort ends the collective's kernels early, and its event then
    // completes too: done is success only if the communicator was not
    // aborted by now (checked after the event, so a collective that ended
    // before an abort still counts).
    const std::string why = w.comm->aborted() ? w.comm->failure() : "";
    finish(w, why.empty() ? 0 : LOOM_STATUS_DEVICE_ERROR,
           why.empty() ? "" : "nccl " + w.what + " on " + w.comm->where() + ": " + why);
    return true;
  }
  if (q != cudaErrorNotReady) {
    (void)cudaGetLastError();
    w.comm->abort(std::string("CUDA error: ") + cudaGetErrorString(q));
    finish(w, LOOM_STATUS_DEVICE_ERROR,
           "nccl " + w.what + " on " + w.comm->where() + ": CUDA error " + cudaGetErrorName(q) + ": " +
               cudaGetErrorString(q));
    return true;
  }
  const std::string why = w.comm->failure();  // NCCL's asynchronous error: a peer lost, a network error
  if (why.empty()) return false;
  drain(w);
  finish(w, LOOM_STATUS_DEVICE_ERROR, "nccl " + w.what + " failed on " + w.comm->where() + ": " + why);
  return true;
}

LoomError* result_of(const Work& w) { return w.error.empty() ? nullptr : plugin::make_error(w.code, w.error); }

// probe: usable only where the CUDA runtime sees a GPU. The message starts
// with "no GPU", which the registry lists as the plugin's state.
LoomError* probe() {
  return plugin::guard([] {
#if !defined(LOOM_NCCL_STUB_RUNTIME)  // the stub runtime needs no driver
    if (const char* missing = gpu_vendor::missing_driver())
      throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string("no GPU (") + missing + ")");
#endif
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string("no GPU (CUDA reports no usable device: ") +
                                                         cudaGetErrorString(e) + ", " + cudaGetErrorName(e) + ")");
    }
    if (n == 0)
      throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string("no GPU (") + gpu_vendor::kDriverFoundNoDevice + ")");
  });
}

LoomError* comm_create(const LoomCommConfig* config, LoomComm** out) {
  return plugin::guard([&] { *out = reinterpret_cast<LoomComm*>(new Comm(*config)); });
}

void comm_destroy(LoomComm* comm) { delete reinterpret_cast<Comm*>(comm); }

LoomError* comm_abort(LoomComm* comm) {
  return plugin::guard([&] {
    reinterpret_cast<Comm*>(comm)->abort("comm_abort was called (the host is shutting down, or knows a peer is lost)");
  });
}

LoomError* collective_start(LoomComm* handle, const LoomCollective* c, LoomCommWork** out) {
  return plugin::guard([&] {
    Comm& comm = *reinterpret_cast<Comm*>(handle);
    const char* name = plugin::comm_op_name(c->op);
    if (!name)
      throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, "nccl: unknown collective op code " + std::to_string(c->op));
    const bool p2p = c->op == LOOM_COMM_SEND || c->op == LOOM_COMM_RECV;
    // NCCL has no tags: a send and a receive pair in the order each rank
    // issues them to the other; the tag only names the call in messages.
    const std::string what =
        std::string(name) + (p2p ? " (peer " + std::to_string(c->root) + ", tag " + std::to_string(c->tag) + ")"
                                 : " (sequence " + std::to_string(c->sequence) + ")");
    const Call call = make_call(*c, comm.rank(), comm.size(), comm.device(), what);
    auto work = std::make_unique<Work>();
    work->comm = &comm;
    work->what = what;
    work->event = comm.issue(
        what, [&](ncclComm_t nccl) { return issue_call(call, nccl, comm.rank(), comm.size(), comm.scratch()); },
        call.stream);
    *out = reinterpret_cast<LoomCommWork*>(work.release());
  });
}

LoomError* work_wait(LoomCommWork* handle, int64_t timeout_ms) {
  return plugin::guard([&] {
    Work& w = *reinterpret_cast<Work*>(handle);
    std::lock_guard<std::mutex> lock(w.mutex);
    const int64_t limit = timeout_ms < 0 ? w.comm->timeout_ms() : timeout_ms;
    const auto deadline = deadline_after(limit);
    Backoff backoff;
    while (!poll(w)) {
      if (Clock::now() >= deadline) {
        const std::string why = "not complete after " + std::to_string(limit) +
                                " ms (the timeout): a peer may be lost or stuck, or issued another collective";
        w.comm->abort("nccl " + w.what + " timed out");
        drain(w);
        finish(w, LOOM_STATUS_DEVICE_ERROR,
               "nccl " + w.what + " on " + w.comm->where() + ": " + why + "; the communicator was aborted");
        break;
      }
      backoff.pause();
    }
    plugin::throw_if_error(result_of(w));
  });
}

LoomError* work_test(LoomCommWork* handle, int32_t* out_done) {
  return plugin::guard([&] {
    Work& w = *reinterpret_cast<Work*>(handle);
    std::lock_guard<std::mutex> lock(w.mutex);
    *out_done = poll(w) ? 1 : 0;
  });
}

void work_release(LoomCommWork* handle) {
  Work* w = reinterpret_cast<Work*>(handle);
  w->comm->destroy_event(w->event);
  delete w;
}

const LoomCommPluginInfo kInfo = {
    sizeof(LoomCommPluginInfo),
    LOOM_COMM_ABI_MAJOR,
    LOOM_COMM_ABI_MINOR,
    LOOM_NCCL_NAME,
    "1.0",
    LOOM_NCCL_DEVICE_TYPE,
    dtype_mask(),
    &probe,
    &comm_create,
    &comm_destroy,
    &comm_abort,
    &collective_start,
    &work_wait,
    &work_test,
    &work_release,
};

}  // namespace
}  // namespace loom::nccl_plugin

extern "C" __attribute__((visibility("default"))) const LoomCommPluginInfo* loom_comm_plugin_entry(void) {
  return &loom::nccl_plugin::kInfo;
}
