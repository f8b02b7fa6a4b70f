// process_group.h (distributed-internal) — ProcessGroup over one plugin
// communicator: argument checks, staging of non-contiguous tensors, the
// average, sequence numbers.
#pragma once

#include "communicator.h"

#include <loom/distributed/distributed.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace loom::distributed::detail {

class PluginProcessGroup : public ProcessGroup {
 public:
  // `name` for messages ("default", "group 2").
  PluginProcessGroup(std::string name, std::string backend, std::shared_ptr<Communicator> comm, int rank,
                     std::vector<int> global_ranks);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(global_ranks_.size()); }
  const std::string& backend() const override { return backend_; }
  const std::vector<int>& global_ranks() const override { return global_ranks_; }
  // The group rank of a global rank, or -1.
  int group_rank(int global_rank) const;

  std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op, bool async_op) override;
  std::shared_ptr<Work> broadcast(Tensor& tensor, int src, bool async_op) override;
  std::shared_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op, bool async_op) override;
  std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op) override;
  std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                                              bool async_op) override;
  std::shared_ptr<Work> all_to_all_single(Tensor& output, const Tensor& input, bool async_op) override;
  std::shared_ptr<Work> gather_into_tensor(Tensor& output, const Tensor& input, int dst, bool async_op) override;
  std::shared_ptr<Work> scatter_tensor(Tensor& output, const Tensor& input, int src, bool async_op) override;
  std::shared_ptr<Work> barrier(bool async_op) override;
  std::shared_ptr<Work> send(const Tensor& tensor, int dst, int tag) override;
  std::shared_ptr<Work> recv(Tensor& tensor, int src, int tag) override;

 private:
  struct Args;
  std::shared_ptr<Work> start(Args& a, bool async_op);
  void check_tensor(const Tensor& t, const char* op, const char* which) const;
  // Whether `t` travels through host copies (host_copy.h).
  bool host_copies(const Tensor& t) const;
  // What the plugin gets for `t`: `t` itself when contiguous and on the
  // backend's device; else a contiguous (host) copy, copied back into `t`
  // on completion when `written`.
  Tensor stage(Args& a, const Tensor& t, bool written) const;
  void check_rank(int r, const char* op, const char* which) const;

  std::string name_;
  std::string backend_;
  std::shared_ptr<Communicator> comm_;
  int rank_;
  std::vector<int> global_ranks_;
  std::atomic<uint64_t> sequence_{0};
  // The highest sequence number whose collective completed here (shared
  // with the works, which update it).
  std::shared_ptr<std::atomic<uint64_t>> last_completed_ = std::make_shared<std::atomic<uint64_t>>(0);
};

}  // namespace loom::distributed::detail
