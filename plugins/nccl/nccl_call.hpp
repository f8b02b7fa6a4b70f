// One collective (comm_api.h's LoomCollective) in NCCL's terms: its
// arguments checked, loom's dtype and reduce op mapped to NCCL's, and the
// NCCL calls that run it. No state: the communicator is nccl_comm.hpp's.
#pragma once

#include <loom/comm_api.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace loom::nccl_plugin {

// LOOM_DTYPE_BIT of every loom dtype NCCL moves and reduces: all but int16,
// which NCCL lacks (the host refuses it, naming the dtype, before any call).
uint64_t dtype_mask();

// A contiguous tensor as NCCL takes it.
struct Buffer {
  char* data = nullptr;  // first element (data + byte_offset)
  size_t count = 0;      // elements
  size_t item = 0;       // bytes per element
};

struct Call {
  int32_t op = 0;
  int32_t root = 0;  // the root, or the peer of SEND / RECV
  Buffer in, out;    // count 0 and no data where the rank has none
  ncclDataType_t type = ncclUint8;
  ncclRedOp_t reduce = ncclSum;
  cudaStream_t stream = nullptr;  // NULL: the device's default stream
};

// Checks `c` on the rank `rank` of `world`, whose GPU is `device`, and
// returns it in NCCL's terms; throws plugin::Failure naming `what` (the op,
// its sequence or peer) and the problem.
Call make_call(const LoomCollective& c, int rank, int world, int device, const std::string& what);

// The NCCL calls of `c` on `comm` (nothing for zero elements); the last
// result, which may be ncclInProgress (non-blocking communicator).
// `scratch`: one device float (barrier).
ncclResult_t issue_call(const Call& c, ncclComm_t comm, int rank, int world, void* scratch);

}  // namespace loom::nccl_plugin
