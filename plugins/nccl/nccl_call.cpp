// make_call and issue_call (nccl_call.hpp).
#include "nccl_call.hpp"

#include <loom/plugin.hpp>

namespace loom::nccl_plugin {
namespace {

// loom's dtypes in NCCL's terms; the one table dtype_mask() and the mapping
// come from. bool travels as bytes of 0 and 1 (its reductions: reduce_op).
struct DTypeEntry {
  int32_t loom;
  ncclDataType_t nccl;
};
constexpr DTypeEntry kDTypes[] = {
    {LOOM_DTYPE_BOOL, ncclUint8},        {LOOM_DTYPE_UINT8, ncclUint8},     {LOOM_DTYPE_INT8, ncclInt8},
    {LOOM_DTYPE_INT32, ncclInt32},       {LOOM_DTYPE_INT64, ncclInt64},     {LOOM_DTYPE_FLOAT16, ncclFloat16},
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
    {LOOM_DTYPE_BFLOAT16, ncclBfloat16},
#endif
    {LOOM_DTYPE_FLOAT32, ncclFloat32},   {LOOM_DTYPE_FLOAT64, ncclFloat64},
};

[[noreturn]] void fail(int32_t code, const std::string& what, const std::string& why) {
  throw plugin::Failure(code, "nccl " + what + ": " + why);
}

ncclDataType_t nccl_type(int32_t dtype, const std::string& what) {
  for (const DTypeEntry& e : kDTypes)
    if (e.loom == dtype) return e.nccl;
  fail(LOOM_STATUS_UNSUPPORTED, what, std::string("NCCL has no ") + plugin::dtype_name(dtype) + " type");
}

// A bool sum is `or`, a bool product `and` (as the gloo plugin reduces
// them): on bytes of 0 and 1, max and min.
ncclRedOp_t reduce_op(int32_t op, bool is_bool, const std::string& what) {
  switch (op) {
    case LOOM_COMM_SUM: return is_bool ? ncclMax : ncclSum;
    case LOOM_COMM_PRODUCT: return is_bool ? ncclMin : ncclProd;
    case LOOM_COMM_MIN: return ncclMin;
    case LOOM_COMM_MAX: return ncclMax;
    default: fail(LOOM_STATUS_UNSUPPORTED, what, "unknown reduce op code " + std::to_string(op));
  }
}

Buffer buffer_of(const LoomTensorDesc& d) {
  Buffer b;
  b.data = static_cast<char*>(d.data) + d.byte_offset;
  b.count = static_cast<size_t>(plugin::numel(d));
  b.item = plugin::dtype_itemsize(d.dtype);
  return b;
}

char* chunk(const Buffer& b, size_t j, size_t m) { return b.data + j * m * b.item; }

// The first failure of a sequence of NCCL calls (ncclInProgress is none:
// the non-blocking communicator queues in the background).
struct FirstFailure {
  ncclResult_t result = ncclSuccess;
  void operator()(ncclResult_t r) {
    if ((result == ncclSuccess || result == ncclInProgress) && r != ncclSuccess) result = r;
  }
};

// ncclSend / ncclRecv pairs in one group, so that every transfer can
// progress at once (each is blocking for the GPU on its own).
template <class Body>
ncclResult_t grouped(Body&& body) {
  FirstFailure f;
  f(ncclGroupStart());
  if (f.result != ncclSuccess) return f.result;
  body(f);
  const ncclResult_t end = ncclGroupEnd();
  return f.result == ncclSuccess || f.result == ncclInProgress ? end : f.result;
}

}  // namespace

uint64_t dtype_mask() {
  uint64_t mask = 0;
  for (const DTypeEntry& e : kDTypes) mask |= LOOM_DTYPE_BIT(e.loom);
  return mask;
}

Call make_call(const LoomCollective& c, int rank, int world, int device, const std::string& what) {
  auto need = [&](bool ok, const std::string& why) {
    if (!ok) fail(LOOM_STATUS_INVALID_ARGUMENT, what, why);
  };
  const int32_t op = c.op;
  const bool root = rank == c.root;
  const bool p2p = op == LOOM_COMM_SEND || op == LOOM_COMM_RECV;
  const bool rooted =
      p2p || op == LOOM_COMM_BROADCAST || op == LOOM_COMM_REDUCE || op == LOOM_COMM_GATHER || op == LOOM_COMM_SCATTER;
  if (rooted)
    need(c.root >= 0 && c.root < world, std::string(p2p ? "peer " : "root ") + std::to_string(c.root) +
                                            " is not a rank of a world of " + std::to_string(world));
  if (p2p) need(c.root != rank, "a rank cannot send to or receive from itself");
  // Which tensors this rank has (comm_api.h's op table).
  const bool input_here = op != LOOM_COMM_BARRIER && op != LOOM_COMM_RECV && !(op == LOOM_COMM_SCATTER && !root);
  const bool output_here =
      op != LOOM_COMM_BARRIER && op != LOOM_COMM_SEND && !((op == LOOM_COMM_REDUCE || op == LOOM_COMM_GATHER) && !root);
  if (input_here) need(c.num_inputs >= 1 && c.inputs, "needs an input tensor");
  if (output_here) need(c.num_outputs >= 1 && c.outputs, "needs an output tensor");

  Call call;
  call.op = op;
  call.root = c.root;
  if (c.struct_size >= offsetof(LoomCollective, stream) + sizeof c.stream)
    call.stream = static_cast<cudaStream_t>(c.stream);
  int32_t dtype = LOOM_DTYPE_FLOAT32;  // barrier's scratch
  auto take = [&](const LoomTensorDesc& d, const char* which) {
    need(d.device.index == device, std::string("the ") + which + " is on GPU " + std::to_string(d.device.index) +
                                       ", but this rank's communicator uses cuda:" + std::to_string(device) +
                                       " (one GPU per rank: move the tensor there)");
    dtype = d.dtype;
    return buffer_of(d);
  };
  if (input_here) call.in = take(c.inputs[0], "input");
  if (output_here) call.out = take(c.outputs[0], "output");
  if (input_here && output_here) need(c.inputs[0].dtype == c.outputs[0].dtype, "input and output dtypes differ");
  call.type = nccl_type(dtype, what);
  const bool reducing = op == LOOM_COMM_ALL_REDUCE || op == LOOM_COMM_REDUCE || op == LOOM_COMM_REDUCE_SCATTER;
  if (reducing) call.reduce = reduce_op(c.reduce_op, dtype == LOOM_DTYPE_BOOL, what);

  const size_t w = static_cast<size_t>(world), n = call.in.count, m = call.out.count;
  switch (op) {
    case LOOM_COMM_ALL_REDUCE:
    case LOOM_COMM_BROADCAST: need(n == m, "input and output sizes differ"); break;
    case LOOM_COMM_REDUCE:
      if (root) need(n == m, "input and output sizes differ");
      break;
    case LOOM_COMM_ALL_GATHER: need(m == w * n, "the output must hold world_size times the input"); break;
    case LOOM_COMM_GATHER:
      if (root) need(m == w * n, "the output must hold world_size times the input");
      break;
    case LOOM_COMM_REDUCE_SCATTER: need(n == w * m, "the input must hold world_size times the output"); break;
    case LOOM_COMM_SCATTER:
      if (root) need(n == w * m, "the input must hold world_size times the output");
      break;
    case LOOM_COMM_ALL_TO_ALL:
      need(n == m && n % w == 0, "input and output must be equal and divisible into world_size chunks");
      need(n == 0 || call.in.data != call.out.data, "all_to_all cannot run in place");
      break;
    case LOOM_COMM_BARRIER:
    case LOOM_COMM_SEND:
    case LOOM_COMM_RECV: break;
    default: fail(LOOM_STATUS_UNSUPPORTED, what, "unknown collective op code " + std::to_string(op));
  }
  return call;
}

ncclResult_t issue_call(const Call& c, ncclComm_t comm, int rank, int world, void* scratch) {
  const size_t w = static_cast<size_t>(world);
  const bool root = rank == c.root;
  switch (c.op) {
    case LOOM_COMM_ALL_REDUCE:
      if (!c.in.count) return ncclSuccess;
      return ncclAllReduce(c.in.data, c.out.data, c.in.count, c.type, c.reduce, comm, c.stream);
    case LOOM_COMM_BROADCAST:
      if (!c.out.count) return ncclSuccess;
      return ncclBroadcast(c.in.data, c.out.data, c.out.count, c.type, c.root, comm, c.stream);
    case LOOM_COMM_REDUCE:  // recvbuff is read only on the root
      if (!c.in.count) return ncclSuccess;
      return ncclReduce(c.in.data, root ? c.out.data : nullptr, c.in.count, c.type, c.reduce, c.root, comm, c.stream);
    case LOOM_COMM_ALL_GATHER:
      if (!c.in.count) return ncclSuccess;
      return ncclAllGather(c.in.data, c.out.data, c.in.count, c.type, comm, c.stream);
    case LOOM_COMM_REDUCE_SCATTER:
      if (!c.out.count) return ncclSuccess;
      return ncclReduceScatter(c.in.data, c.out.data, c.out.count, c.type, c.reduce, comm, c.stream);
    case LOOM_COMM_ALL_TO_ALL: {
      const size_t m = c.in.count / w;
      if (!m) return ncclSuccess;
      return grouped([&](FirstFailure& f) {
        for (size_t j = 0; j < w; ++j) {
          f(ncclSend(chunk(c.in, j, m), m, c.type, static_cast<int>(j), comm, c.stream));
          f(ncclRecv(chunk(c.out, j, m), m, c.type, static_cast<int>(j), comm, c.stream));
        }
      });
    }
    case LOOM_COMM_GATHER: {
      const size_t n = c.in.count;
      if (!n) return ncclSuccess;
      return grouped([&](FirstFailure& f) {
        if (root)
          for (size_t r = 0; r < w; ++r)
            f(ncclRecv(chunk(c.out, r, n), n, c.type, static_cast<int>(r), comm, c.stream));
        f(ncclSend(c.in.data, n, c.type, c.root, comm, c.stream));
      });
    }
    case LOOM_COMM_SCATTER: {
      const size_t m = c.out.count;
      if (!m) return ncclSuccess;
      return grouped([&](FirstFailure& f) {
        if (root)
          for (size_t r = 0; r < w; ++r) f(ncclSend(chunk(c.in, r, m), m, c.type, static_cast<int>(r), comm, c.stream));
        f(ncclRecv(c.out.data, m, c.type, c.root, comm, c.stream));
      });
    }
    case LOOM_COMM_BARRIER:  // an all_reduce of one float: done once every rank took part
      return ncclAllReduce(scratch, scratch, 1, ncclFloat32, ncclSum, comm, c.stream);
    case LOOM_COMM_SEND:
      if (!c.in.count) return ncclSuccess;
      return ncclSend(c.in.data, c.in.count, c.type, c.root, comm, c.stream);
    case LOOM_COMM_RECV:
      if (!c.out.count) return ncclSuccess;
      return ncclRecv(c.out.data, c.out.count, c.type, c.root, comm, c.stream);
    default: return ncclInvalidArgument;  // make_call refused it already
  }
}

}  // namespace loom::nccl_plugin
