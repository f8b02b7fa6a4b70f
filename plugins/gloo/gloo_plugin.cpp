// The gloo communication plugin (comm_api.h): collectives on cpu tensors
// over TCP with Facebook's gloo (Debian's libgloo-dev). Every LOOM_COMM_*
// op and every loom dtype; reductions are loom's own ops
// (reduce_functions.hpp). Each collective runs on its communicator's worker
// thread (gloo_comm.hpp); the host waits on or polls the work. When every
// rank is on this host, all_reduce, reduce_scatter, reduce, broadcast and
// barrier go through shared memory instead (shm_group.hpp).
#include "gloo_comm.hpp"
#include "reduce_functions.hpp"
#include "shm_group.hpp"

#include <loom/comm_api.h>
#include <loom/plugin.hpp>
#include <loom/plugin/comm_op_name.hpp>
#include <loom/plugin/dtype_visit.hpp>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/scatter.h>
#include <gloo/transport/unbound_buffer.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace loom::gloo_plugin {
namespace {

// A contiguous tensor's bytes.
struct Span {
  char* data = nullptr;
  size_t elements = 0;
  size_t item = 0;
  int32_t dtype = 0;
  size_t bytes() const { return elements * item; }
};

Span span_of(const LoomTensorDesc& d) {
  Span s;
  s.data = static_cast<char*>(d.data) + d.byte_offset;
  s.elements = static_cast<size_t>(plugin::numel(d));
  s.item = plugin::dtype_itemsize(d.dtype);
  s.dtype = d.dtype;
  return s;
}

// Calls f(U{}) with an unsigned type of the item size: gloo's non-reducing
// algorithms only move bytes, and its templates take the element size from
// the type.
template <class F>
void with_item_type(size_t item, F&& f) {
  switch (item) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    default: return f(uint64_t{});
  }
}

struct Call {
  int32_t op, reduce_op, root, tag;
  std::vector<Span> in, out;
  uint64_t sequence;
  uint64_t signature;
};

void check_counts(const Call& c, const Comm& comm, const char* what) {
  auto need = [&](bool ok, const std::string& why) {
    if (!ok) throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string("gloo ") + what + ": " + why);
  };
  const size_t world = static_cast<size_t>(comm.size());
  const bool root = comm.rank() == c.root;
  auto in = [&](size_t k) { return k < c.in.size(); };
  auto out = [&](size_t k) { return k < c.out.size(); };
  if (c.op != LOOM_COMM_BARRIER && c.op != LOOM_COMM_RECV && !(c.op == LOOM_COMM_SCATTER && !root))
    need(in(0), "needs an input tensor");
  const bool output_here = c.op != LOOM_COMM_BARRIER && c.op != LOOM_COMM_SEND &&
                           !((c.op == LOOM_COMM_REDUCE || c.op == LOOM_COMM_GATHER) && !root);
  if (output_here) need(out(0), "needs an output tensor");
  if (in(0) && out(0)) need(c.in[0].dtype == c.out[0].dtype, "input and output dtypes differ");
  const bool rooted = c.op == LOOM_COMM_BROADCAST || c.op == LOOM_COMM_REDUCE || c.op == LOOM_COMM_GATHER ||
                      c.op == LOOM_COMM_SCATTER || c.op == LOOM_COMM_SEND || c.op == LOOM_COMM_RECV;
  if (rooted)
    need(c.root >= 0 && c.root < comm.size(), (c.op == LOOM_COMM_SEND || c.op == LOOM_COMM_RECV ? "peer " : "root ") +
                                                  std::to_string(c.root) + " is not a rank of a world of " +
                                                  std::to_string(comm.size()));
  switch (c.op) {
    case LOOM_COMM_ALL_REDUCE:
    case LOOM_COMM_BROADCAST:
      need(c.in[0].elements == c.out[0].elements, "input and output sizes differ");
      break;
    case LOOM_COMM_REDUCE:
      if (root) need(c.in[0].elements == c.out[0].elements, "input and output sizes differ");
      break;
    case LOOM_COMM_ALL_GATHER:
      need(c.out[0].elements == world * c.in[0].elements, "the output must hold world_size times the input");
      break;
    case LOOM_COMM_GATHER:
      if (root) need(c.out[0].elements == world * c.in[0].elements, "the output must hold world_size times the input");
      break;
    case LOOM_COMM_REDUCE_SCATTER:
      need(c.in[0].elements == world * c.out[0].elements, "the input must hold world_size times the output");
      break;
    case LOOM_COMM_ALL_TO_ALL:
      need(c.in[0].elements == c.out[0].elements && c.in[0].elements % world == 0,
           "input and output must be equal and divisible into world_size chunks");
      break;
    case LOOM_COMM_SCATTER:
      if (root) need(c.in[0].elements == world * c.out[0].elements, "the input must hold world_size times the output");
      break;
    case LOOM_COMM_SEND:
      need(c.root != comm.rank(), "a rank cannot send to itself");
      break;
    case LOOM_COMM_RECV:
      need(c.root != comm.rank(), "a rank cannot receive from itself");
      break;
    default: break;
  }
}

void run(Comm& comm, const Call& c) {
  const auto& ctx = comm.context();
  const auto timeout = comm.timeout();
  const auto deadline = ShmGroup::Clock::now() + timeout;
  // Equal on the ranks only when both the sequence number and the
  // signature are: desynchronised ranks never pair their messages.
  const uint32_t tag = static_cast<uint32_t>(c.sequence * 0x9E3779B1u) ^
                       static_cast<uint32_t>(c.signature ^ (c.signature >> 32));
  const int32_t dtype = !c.in.empty() ? c.in[0].dtype : !c.out.empty() ? c.out[0].dtype : LOOM_DTYPE_UINT8;
  const size_t item = plugin::dtype_itemsize(dtype);
  switch (c.op) {
    case LOOM_COMM_ALL_REDUCE:
    case LOOM_COMM_REDUCE_SCATTER: {
      // reduce_scatter: all_reduce into a buffer, keep this rank's chunk.
      const bool scatter = c.op == LOOM_COMM_REDUCE_SCATTER;
      std::vector<char> buffer;
      char* dst = c.out[0].data;
      if (scatter) {
        buffer.assign(c.in[0].data, c.in[0].data + c.in[0].bytes());
        dst = buffer.data();
      } else if (dst != c.in[0].data) {
        std::memcpy(dst, c.in[0].data, c.in[0].bytes());
      }
      if (comm.size() > 1 && c.in[0].elements) {
        if (comm.shm())
          comm.shm()->all_reduce(dst, c.in[0].elements, item, reduce_function(dtype, c.reduce_op), c.sequence,
                                 c.signature, deadline);
        else
          with_item_type(item, [&](auto tag_type) {
            using U = decltype(tag_type);
            gloo::AllreduceOptions opts(ctx);
            opts.setOutput(reinterpret_cast<U*>(dst), c.in[0].elements);
            opts.setReduceFunction(reduce_function(dtype, c.reduce_op));
            opts.setTag(tag);
            opts.setTimeout(timeout);
            gloo::allreduce(opts);
          });
      }
      if (scatter)
        std::memcpy(c.out[0].data, dst + static_cast<size_t>(comm.rank()) * c.out[0].bytes(), c.out[0].bytes());
      return;
    }
    case LOOM_COMM_REDUCE: {
      const bool root = comm.rank() == c.root;
      // gloo reduces in place into its output on every rank: a scratch
      // copy where this rank has no output (or must not be written).
      std::vector<char> scratch(c.in[0].data, c.in[0].data + c.in[0].bytes());
      if (comm.size() > 1 && c.in[0].elements) {
        if (comm.shm())  // in shared memory every rank gets the reduction for the price of one
          comm.shm()->all_reduce(scratch.data(), c.in[0].elements, item, reduce_function(dtype, c.reduce_op),
                                 c.sequence, c.signature, deadline);
        else
          with_item_type(item, [&](auto tag_type) {
            using U = decltype(tag_type);
            gloo::ReduceOptions opts(ctx);
            opts.setOutput(reinterpret_cast<U*>(scratch.data()), c.in[0].elements);
            opts.setRoot(c.root);
            opts.setReduceFunction(reduce_function(dtype, c.reduce_op));
            opts.setTag(tag);
            opts.setTimeout(timeout);
            gloo::reduce(opts);
          });
      }
      if (root) std::memcpy(c.out[0].data, scratch.data(), c.out[0].bytes());
      return;
    }
    case LOOM_COMM_BROADCAST: {
      if (c.out[0].data != c.in[0].data && comm.rank() == c.root)
        std::memcpy(c.out[0].data, c.in[0].data, c.in[0].bytes());
      if (comm.size() == 1 || !c.out[0].elements) return;
      if (comm.shm()) return comm.shm()->broadcast(c.out[0].data, c.out[0].bytes(), c.root, c.sequence, c.signature,
                                                   deadline);
      with_item_type(item, [&](auto tag_type) {
        using U = decltype(tag_type);
        gloo::BroadcastOptions opts(ctx);
        opts.setOutput(reinterpret_cast<U*>(c.out[0].data), c.out[0].elements);
        opts.setRoot(c.root);
        opts.setTag(tag);
        opts.setTimeout(timeout);
        gloo::broadcast(opts);
      });
      return;
    }
    case LOOM_COMM_ALL_GATHER: {
      if (comm.size() == 1 || !c.in[0].elements) {
        if (c.in[0].elements) std::memcpy(c.out[0].data, c.in[0].data, c.in[0].bytes());
        return;
      }
      with_item_type(item, [&](auto tag_type) {
        using U = decltype(tag_type);
        gloo::AllgatherOptions opts(ctx);
        opts.setInput(reinterpret_cast<U*>(c.in[0].data), c.in[0].elements);
        opts.setOutput(reinterpret_cast<U*>(c.out[0].data), c.out[0].elements);
        opts.setTag(tag);
        opts.setTimeout(timeout);
        gloo::allgather(opts);
      });
      return;
    }
    case LOOM_COMM_GATHER: {
      const bool root = comm.rank() == c.root;
      std::vector<char> scratch;
      char* out = root ? c.out[0].data : nullptr;
      if (comm.size() == 1) {
        std::memcpy(out, c.in[0].data, c.in[0].bytes());
        return;
      }
      if (!c.in[0].elements) return;
      with_item_type(item, [&](auto tag_type) {
        using U = decltype(tag_type);
        gloo::GatherOptions opts(ctx);
        opts.setInput(reinterpret_cast<U*>(c.in[0].data), c.in[0].elements);
        if (root) opts.setOutput(reinterpret_cast<U*>(out), c.out[0].elements);
        opts.setRoot(c.root);
        opts.setTag(tag);
        opts.setTimeout(timeout);
        gloo::gather(opts);
      });
      return;
    }
    case LOOM_COMM_SCATTER: {
      const bool root = comm.rank() == c.root;
      const size_t m = c.out[0].elements;
      if (comm.size() == 1) {
        std::memcpy(c.out[0].data, c.in[0].data, c.out[0].bytes());
        return;
      }
      if (!m) return;
      with_item_type(item, [&](auto tag_type) {
        using U = decltype(tag_type);
        gloo::ScatterOptions opts(ctx);
        if (root) {
          std::vector<U*> chunks;
          for (int r = 0; r < comm.size(); ++r) chunks.push_back(reinterpret_cast<U*>(c.in[0].data) + r * m);
          opts.setInputs(chunks, m);
        }
        opts.setOutput(reinterpret_cast<U*>(c.out[0].data), m);
        opts.setRoot(c.root);
        opts.setTag(tag);
        opts.setTimeout(timeout);
        gloo::scatter(opts);
      });
      return;
    }
    case LOOM_COMM_ALL_TO_ALL: {
      if (comm.size() == 1 || !c.in[0].elements) {
        if (c.in[0].elements) std::memcpy(c.out[0].data, c.in[0].data, c.in[0].bytes());
        return;
      }
      with_item_type(item, [&](auto tag_type) {
        using U = decltype(tag_type);
        gloo::AlltoallOptions opts(ctx);
        opts.setInput(reinterpret_cast<U*>(c.in[0].data), c.in[0].elements);
        opts.setOutput(reinterpret_cast<U*>(c.out[0].data), c.out[0].elements);
        opts.setTag(tag);
        opts.setTimeout(timeout);
        gloo::alltoall(opts);
      });
      return;
    }
    case LOOM_COMM_BARRIER: {
      if (comm.size() == 1) return;
      if (comm.shm()) return comm.shm()->barrier(c.sequence, c.signature, deadline);
      gloo::BarrierOptions opts(ctx);
      opts.setTag(tag);
      opts.setTimeout(timeout);
      gloo::barrier(opts);
      return;
    }
    default: break;
  }
}

// A send or receive is posted here, on the caller's thread, in the order
// the host starts them (gloo pairs sends and receives per peer and slot in
// posting order), and completed by a thread of its own: on the
// communicator's worker a blocking send would wait for a receive queued
// behind it on the peer — two ranks sending to each other first would
// deadlock.
std::shared_ptr<Work> start_point_to_point(Comm& comm, const Call& c, const std::string& what) {
  const bool send = c.op == LOOM_COMM_SEND;
  const Span& s = send ? c.in[0] : c.out[0];
  auto work = std::make_shared<Work>();
  if (!s.bytes()) {
    work->finish(0, "");
    return work;
  }
  std::unique_ptr<gloo::transport::UnboundBuffer> buf = comm.context()->createUnboundBuffer(s.data, s.bytes());
  // The slot pairs a send with its receive: the user's tag, in a space of
  // its own (collectives use the sequence as their tag).
  const uint64_t slot = (uint64_t{1} << 63) | static_cast<uint32_t>(c.tag);
  if (send)
    buf->send(c.root, slot);
  else
    buf->recv(c.root, slot);
  const auto timeout = comm.timeout();
  const int peer = c.root, rank = comm.rank();
  Work* raw = work.get();  // the Work joins this thread before it goes
  work->adopt(std::thread([buf = std::move(buf), raw, send, timeout, peer, rank, what] {
    try {
      const bool ok = send ? buf->waitSend(timeout) : buf->waitRecv(timeout);
      if (ok)
        raw->finish(0, "");
      else
        raw->finish(LOOM_STATUS_DEVICE_ERROR, "gloo " + what + " on rank " + std::to_string(rank) + ": " +
                                                  (send ? "the send to rank " : "the receive from rank ") +
                                                  std::to_string(peer) + " was aborted");
    } catch (const std::exception& e) {
      raw->finish(LOOM_STATUS_DEVICE_ERROR, "gloo " + what + " failed on rank " + std::to_string(rank) + " (peer " +
                                                std::to_string(peer) + "): " + e.what());
    }
  }));
  return work;
}

struct WorkHandle {
  std::shared_ptr<Work> work;
};

LoomError* comm_create(const LoomCommConfig* config, LoomComm** out) {
  return plugin::guard([&] { *out = reinterpret_cast<LoomComm*>(new Comm(*config)); });
}

void comm_destroy(LoomComm* comm) { delete reinterpret_cast<Comm*>(comm); }

LoomError* comm_abort(LoomComm* comm) {
  return plugin::guard([&] { reinterpret_cast<Comm*>(comm)->abort(); });
}

LoomError* collective_start(LoomComm* handle, const LoomCollective* c, LoomCommWork** out) {
  return plugin::guard([&] {
    Comm& comm = *reinterpret_cast<Comm*>(handle);
    const char* name = plugin::comm_op_name(c->op);
    if (!name) throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, "gloo: unknown collective op code " + std::to_string(c->op));
    const bool has_signature = c->struct_size >= offsetof(LoomCollective, signature) + sizeof c->signature;
    Call call{c->op, c->reduce_op, c->root, c->tag, {}, {}, c->sequence, has_signature ? c->signature : 0};
    for (int32_t k = 0; k < c->num_inputs; ++k) call.in.push_back(span_of(c->inputs[k]));
    for (int32_t k = 0; k < c->num_outputs; ++k) call.out.push_back(span_of(c->outputs[k]));
    const bool p2p = c->op == LOOM_COMM_SEND || c->op == LOOM_COMM_RECV;
    const std::string what = std::string(name) + (p2p ? " (peer " + std::to_string(c->root) + ", tag " +
                                                            std::to_string(c->tag) + ")"
                                                      : " (sequence " + std::to_string(c->sequence) + ")");
    check_counts(call, comm, what.c_str());
    const bool reducing = c->op == LOOM_COMM_ALL_REDUCE || c->op == LOOM_COMM_REDUCE || c->op == LOOM_COMM_REDUCE_SCATTER;
    if (reducing && !call.in.empty()) (void)reduce_function(call.in[0].dtype, c->reduce_op);  // fail now, not later
    std::shared_ptr<Work> work;
    if (c->op == LOOM_COMM_SEND || c->op == LOOM_COMM_RECV)
      work = start_point_to_point(comm, call, what);
    else if (c->struct_size >= offsetof(LoomCollective, flags) + sizeof c->flags && (c->flags & LOOM_COMM_FLAG_BLOCKING))
      work = comm.run_now_if_idle(what, [&comm, call] { run(comm, call); });
    else
      work = comm.start(what, [&comm, call] { run(comm, call); });
    *out = reinterpret_cast<LoomCommWork*>(new WorkHandle{std::move(work)});
  });
}

LoomError* work_wait(LoomCommWork* handle, int64_t timeout_ms) {
  return plugin::guard([&] {
    Work& work = *reinterpret_cast<WorkHandle*>(handle)->work;
    if (!work.wait(timeout_ms))
      throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR, "gloo: the collective did not complete within " +
                                                          std::to_string(timeout_ms) + " ms");
    plugin::throw_if_error(work.result());
  });
}

LoomError* work_test(LoomCommWork* handle, int32_t* out_done) {
  return plugin::guard([&] { *out_done = reinterpret_cast<WorkHandle*>(handle)->work->done() ? 1 : 0; });
}

void work_release(LoomCommWork* handle) { delete reinterpret_cast<WorkHandle*>(handle); }

const LoomCommPluginInfo kInfo = {
    sizeof(LoomCommPluginInfo),
    LOOM_COMM_ABI_MAJOR,
    LOOM_COMM_ABI_MINOR,
    "gloo",
    "1.0",
    "cpu",
    plugin::kAllMask,
    nullptr,
    &comm_create,
    &comm_destroy,
    &comm_abort,
    &collective_start,
    &work_wait,
    &work_test,
    &work_release,
};

}  // namespace
}  // namespace loom::gloo_plugin

extern "C" __attribute__((visibility("default"))) const LoomCommPluginInfo* loom_comm_plugin_entry(void) {
  return &loom::gloo_plugin::kInfo;
}
