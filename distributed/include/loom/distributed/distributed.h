// loom/distributed/distributed.h — process groups and collectives, as
// torch.distributed names them.
//
//   loom::distributed::init_process_group("gloo");        // env://: RANK, WORLD_SIZE,
//   loom::Tensor g = ...;                                 //   MASTER_ADDR, MASTER_PORT
//   loom::distributed::all_reduce(g, ReduceOp::Avg);
//
// A backend ("gloo" for cpu tensors, "nccl" for cuda ones) is a
// communication plugin (loom/comm_api.h) found by the registry like a
// device plugin. Tensors of a device no communication plugin serves go
// through host copies over a cpu backend, counted (host_copy_counts) and
// warned about as LOOM_FALLBACK says; a cuda tensor on a gloo group, or a
// cpu tensor on an nccl group, is refused. The host owns the rest: rendezvous through a key-value
// store (TCP on rank 0, or a file), process groups and their sequence
// numbers, work handles, averaging, non-contiguous tensors (copied in and
// out), and the checks that name what is wrong — a tensor on the wrong
// device, mismatched sizes, a root that is not a rank. Every collective
// ends with an error after the group's timeout rather than hang.
//
// Ranks given to the functions below (src, dst, the ranks of new_group)
// are global ranks, as in PyTorch; ProcessGroup's own methods take ranks
// within the group.
#pragma once

#include <loom/library.h>
#include <loom/tensor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace loom::distributed {

enum class ReduceOp { Sum, Avg, Product, Min, Max };

// "sum", "avg", ...
const char* to_string(ReduceOp op);

struct InitOptions {
  // "env://" (MASTER_ADDR, MASTER_PORT, and RANK / WORLD_SIZE unless given
  // below), "tcp://host:port" (rank 0 serves the store there) or
  // "file:///path" (a file every rank can reach).
  std::string init_method = "env://";
  int world_size = -1;  // -1: from the environment (WORLD_SIZE)
  int rank = -1;        // -1: from the environment (RANK)
  // Rendezvous and every collective end with an error after this long.
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
};

// A collective started with async_op = true.
class Work {
 public:
  virtual ~Work() = default;
  // Blocks until done; throws loom::Error naming the op, the group and the
  // sequence number when it failed. Calling it again returns (or throws)
  // at once.
  virtual void wait() = 0;
  // Non-blocking.
  virtual bool is_completed() = 0;
};

// A group of processes with one communicator of one backend.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;  // within the group
  virtual int size() const = 0;
  virtual const std::string& backend() const = 0;
  // The global rank of each group rank.
  virtual const std::vector<int>& global_ranks() const = 0;

  // Each returns the work when async_op, else waits and returns nullptr.
  // Tensors must stay alive and untouched until the work completes.
  virtual std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op, bool async_op) = 0;
  virtual std::shared_ptr<Work> broadcast(Tensor& tensor, int src, bool async_op) = 0;
  virtual std::shared_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op, bool async_op) = 0;
  // output: world * input's elements, the ranks' inputs one after another
  // along dim 0 (all_gather_into_tensor).
  virtual std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op) = 0;
  virtual std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                                                      bool async_op) = 0;
  virtual std::shared_ptr<Work> all_to_all_single(Tensor& output, const Tensor& input, bool async_op) = 0;
  // gather: `output` (world * input's elements) only on dst, undefined elsewhere.
  virtual std::shared_ptr<Work> gather_into_tensor(Tensor& output, const Tensor& input, int dst, bool async_op) = 0;
  // scatter: `input` (world * output's elements) only on src.
  virtual std::shared_ptr<Work> scatter_tensor(Tensor& output, const Tensor& input, int src, bool async_op) = 0;
  virtual std::shared_ptr<Work> barrier(bool async_op) = 0;
  virtual std::shared_ptr<Work> send(const Tensor& tensor, int dst, int tag) = 0;
  virtual std::shared_ptr<Work> recv(Tensor& tensor, int src, int tag) = 0;
};

// ---- the torch.distributed functions (global ranks; group nullptr: the default group)

void init_process_group(const std::string& backend, const InitOptions& options = {});
void destroy_process_group();
bool is_initialized();
int get_rank();
int get_world_size();
// The group every process is in; throws when not initialized.
ProcessGroup& default_group();
// A group of `ranks` (global, distinct, sorted or not). Every process of
// the default group must call it, in the same order with the same ranks;
// a process outside `ranks` gets nullptr, as PyTorch's non-members get a
// group they cannot use.
std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks);

std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum, ProcessGroup* group = nullptr,
                                 bool async_op = false);
std::shared_ptr<Work> broadcast(Tensor& tensor, int src, ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op = ReduceOp::Sum, ProcessGroup* group = nullptr,
                             bool async_op = false);
// tensor_list: one tensor per rank, each of input's shape and dtype.
std::shared_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, const Tensor& input, ProcessGroup* group = nullptr,
                                 bool async_op = false);
std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input, ProcessGroup* group = nullptr,
                                             bool async_op = false);
std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum,
                                            ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> all_to_all_single(Tensor& output, const Tensor& input, ProcessGroup* group = nullptr,
                                        bool async_op = false);
// Uneven chunks along dim 0: input_split_sizes[j] rows go to rank j,
// output_split_sizes[j] rows come from rank j (each empty: equal chunks).
// The ranks' sizes must agree (rank i's input_split_sizes[j] is rank j's
// output_split_sizes[i]). Runs as one equal-chunk all_to_all of chunks
// padded to the largest, after an all_reduce that finds it.
std::shared_ptr<Work> all_to_all_single(Tensor& output, const Tensor& input,
                                        const std::vector<int64_t>& output_split_sizes,
                                        const std::vector<int64_t>& input_split_sizes, ProcessGroup* group = nullptr,
                                        bool async_op = false);
// gather_list: on dst, one tensor per rank (input's shape); ignored elsewhere.
std::shared_ptr<Work> gather(const Tensor& input, std::vector<Tensor>* gather_list, int dst = 0,
                             ProcessGroup* group = nullptr, bool async_op = false);
// scatter_list: on src, one tensor per rank (output's shape); ignored elsewhere.
std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>* scatter_list, int src = 0,
                              ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> barrier(ProcessGroup* group = nullptr, bool async_op = false);
void send(const Tensor& tensor, int dst, ProcessGroup* group = nullptr, int tag = 0);
void recv(Tensor& tensor, int src, ProcessGroup* group = nullptr, int tag = 0);
std::shared_ptr<Work> isend(const Tensor& tensor, int dst, ProcessGroup* group = nullptr, int tag = 0);
std::shared_ptr<Work> irecv(Tensor& tensor, int src, ProcessGroup* group = nullptr, int tag = 0);

// How many times each op ("all_reduce", ...) communicated a tensor of a
// device type through host copies: a device without a communication plugin
// of its own reaches a cpu backend (gloo) that way — counted, and warned
// about or refused as LOOM_FALLBACK says (allow | warn | error), as an op's
// CPU fallback is (loom::fallback_counts()).
std::vector<FallbackRecord> host_copy_counts();

}  // namespace loom::distributed
