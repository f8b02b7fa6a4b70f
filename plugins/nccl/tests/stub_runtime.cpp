// A stub of the CUDA runtime and NCCL calls the nccl plugin makes, in host
// memory, for one rank (world size 1): the "GPU" is the CPU, a collective
// copies its input to its output when it is queued, and an event is done
// when recorded. Built into the plugin's test variant (backend nccl_stub,
// CMakeLists.txt here), so that the plugin's own logic — rendezvous,
// non-blocking polling, events, timeouts, aborts, messages — runs in the
// tests of machines without a GPU.
//
// Like a non-blocking communicator, every call on a communicator answers
// ncclInProgress once before it is ready. LOOM_NCCL_STUB_FAULT, read at each
// call, injects what a lost peer looks like:
//   hang         a collective never completes (its event stays not ready)
//                until the communicator is aborted
//   async_error  the same, and once the collective is queued the
//                communicator reports ncclRemoteError
//   init_hang    ncclCommInitRankConfig never becomes ready
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

struct CUevent_st {
  bool pending = false;  // recorded behind a collective that has not finished
};

struct ncclComm {
  int rank = 0, nranks = 1;
  int polls_until_ready = 0;  // ncclInProgress answers left
  int polls_until_error = 0;  // async_error: healthy answers left before ncclRemoteError
  bool init_hang = false;
  ncclResult_t async = ncclSuccess;
  struct Transfer {
    bool send;
    const void* from;
    void* to;
    size_t bytes;
  };
  std::vector<Transfer> group;  // sends and receives of the open group
};

namespace {

std::mutex mu;
thread_local int current_device = 0;
thread_local int group_depth = 0;
thread_local ncclComm* group_comm = nullptr;
bool hung = false;  // a collective is "running" until an abort
std::string last_error;
int live_events = 0, live_comms = 0;

std::string fault() {
  const char* f = std::getenv("LOOM_NCCL_STUB_FAULT");
  return f ? f : "";
}

size_t item_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    default: return 8;
  }
}

// A collective queued on `comm`: runs at once (world size 1: a copy),
// unless a fault keeps it running. Answers as a non-blocking call does.
ncclResult_t run(ncclComm* comm, void (*copy)(const void*, void*, size_t), const void* from, void* to, size_t bytes) {
  if (!comm) return ncclInvalidArgument;
  std::lock_guard<std::mutex> lock(mu);
  const std::string f = fault();
  if (f == "hang" || f == "async_error") {
    hung = true;
    if (f == "async_error") comm->polls_until_error = 2;  // the one that says "queued", and one more
  } else if (copy && bytes && from != to) {
    copy(from, to, bytes);
  }
  comm->polls_until_ready = 1;
  return ncclInProgress;
}

void move_bytes(const void* from, void* to, size_t bytes) { std::memmove(to, from, bytes); }

}  // namespace

// What the tests read back: events and communicators not yet destroyed.
extern "C" __attribute__((visibility("default"))) void loom_nccl_stub_counts(int* events, int* comms) {
  std::lock_guard<std::mutex> lock(mu);
  *events = live_events;
  *comms = live_comms;
}

// ------------------------------------------------------------ CUDA runtime ---

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  *device = current_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  current_device = device;
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** p, size_t size) {
  *p = std::malloc(size ? size : 1);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMemset(void* p, int value, size_t count) {
  std::memset(p, value, count);
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) {
  std::lock_guard<std::mutex> lock(mu);
  *event = new CUevent_st;
  ++live_events;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  std::lock_guard<std::mutex> lock(mu);
  event->pending = hung;
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t event) {
  std::lock_guard<std::mutex> lock(mu);
  if (event->pending && hung) return cudaErrorNotReady;
  event->pending = false;
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  std::lock_guard<std::mutex> lock(mu);
  delete event;
  --live_events;
  return cudaSuccess;
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
const char* cudaGetErrorString(cudaError_t) { return "stub CUDA error"; }
const char* cudaGetErrorName(cudaError_t) { return "cudaErrorStub"; }

// -------------------------------------------------------------------- NCCL ---

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i) id->internal[i] = static_cast<char>(i);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* out, int nranks, ncclUniqueId, int rank, ncclConfig_t* config) {
  std::lock_guard<std::mutex> lock(mu);
  if (!config || config->blocking != 0) {
    last_error = "stub: the plugin must make a non-blocking communicator (config.blocking = 0)";
    return ncclInvalidUsage;
  }
  if (nranks != 1 || rank != 0) {
    last_error = "stub: world size 1 only";
    return ncclInvalidUsage;
  }
  auto* comm = new ncclComm;
  comm->init_hang = fault() == "init_hang";
  comm->polls_until_ready = 1;
  ++live_comms;
  *out = comm;
  return ncclInProgress;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* state) {
  std::lock_guard<std::mutex> lock(mu);
  if (comm->init_hang || comm->polls_until_ready > 0) {
    if (comm->polls_until_ready > 0) --comm->polls_until_ready;
    *state = ncclInProgress;
    return ncclSuccess;
  }
  if (comm->polls_until_error > 0 && --comm->polls_until_error == 0) {
    comm->async = ncclRemoteError;
    last_error = "stub: the connection to rank 1 was closed";
  }
  *state = comm->async;
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(mu);
  comm->polls_until_ready = 1;
  return ncclInProgress;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(mu);
  delete comm;
  --live_comms;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(mu);
  hung = false;  // the aborted collective's "kernels" end
  delete comm;
  --live_comms;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t r) {
  return r == ncclRemoteError ? "remote process exited or there was a network error" : "stub NCCL error";
}

const char* ncclGetLastError(ncclComm_t) { return last_error.c_str(); }

ncclResult_t ncclAllReduce(const void* in, void* out, size_t count, ncclDataType_t t, ncclRedOp_t, ncclComm_t comm,
                           cudaStream_t) {
  return run(comm, move_bytes, in, out, count * item_size(t));
}
ncclResult_t ncclBroadcast(const void* in, void* out, size_t count, ncclDataType_t t, int, ncclComm_t comm,
                           cudaStream_t) {
  return run(comm, move_bytes, in, out, count * item_size(t));
}
ncclResult_t ncclReduce(const void* in, void* out, size_t count, ncclDataType_t t, ncclRedOp_t, int, ncclComm_t comm,
                        cudaStream_t) {
  return run(comm, out ? move_bytes : nullptr, in, out, count * item_size(t));
}
ncclResult_t ncclAllGather(const void* in, void* out, size_t count, ncclDataType_t t, ncclComm_t comm, cudaStream_t) {
  return run(comm, move_bytes, in, out, count * item_size(t));
}
ncclResult_t ncclReduceScatter(const void* in, void* out, size_t count, ncclDataType_t t, ncclRedOp_t, ncclComm_t comm,
                               cudaStream_t) {
  return run(comm, move_bytes, in, out, count * item_size(t));
}

// Sends and receives (to and from rank 0 itself) pair in order at the end
// of their group.
ncclResult_t ncclGroupStart() {
  ++group_depth;
  return ncclSuccess;
}
ncclResult_t ncclSend(const void* in, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t) {
  if (group_depth == 0 || peer != 0) return ncclInvalidUsage;
  group_comm = comm;
  comm->group.push_back({true, in, nullptr, count * item_size(t)});
  return ncclSuccess;
}
ncclResult_t ncclRecv(void* out, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t) {
  if (group_depth == 0 || peer != 0) return ncclInvalidUsage;
  group_comm = comm;
  comm->group.push_back({false, nullptr, out, count * item_size(t)});
  return ncclSuccess;
}
ncclResult_t ncclGroupEnd() {
  if (--group_depth > 0 || !group_comm) return ncclSuccess;
  ncclComm* comm = group_comm;
  group_comm = nullptr;
  std::vector<ncclComm::Transfer> sends, recvs;
  for (const auto& x : comm->group) (x.send ? sends : recvs).push_back(x);
  comm->group.clear();
  if (sends.size() != recvs.size()) return ncclInvalidUsage;
  for (size_t k = 0; k < sends.size(); ++k) {
    if (sends[k].bytes != recvs[k].bytes) return ncclInvalidUsage;
    if (fault().empty()) std::memcpy(recvs[k].to, sends[k].from, sends[k].bytes);
  }
  return run(comm, nullptr, nullptr, nullptr, 0);
}
