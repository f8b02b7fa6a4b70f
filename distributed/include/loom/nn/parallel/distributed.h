// loom/nn/parallel/distributed.h — DistributedDataParallel for the C++
// frontend: data-parallel training over loom::distributed, as PyTorch's
// torch.nn.parallel.DistributedDataParallel.
//
//   loom::distributed::init_process_group("gloo");            // env://, from loom-run
//   nn::Sequential net(nn::Linear(64, 256), nn::ReLU(), nn::Linear(256, 10));
//   loom::nn::parallel::DistributedDataParallel ddp(net);     // broadcasts rank 0's values
//   optim::Adam opt(net->parameters(), 1e-3);
//   for (auto& batch : *loader) {                             // this rank's share of the data
//     opt.zero_grad();
//     loss_fn(ddp(batch.data), batch.target).backward();      // .grad: the average over ranks
//     opt.step();
//   }
//
// The constructor broadcasts the module's parameters and buffers from the
// group's first rank. During backward each parameter's gradient is copied
// into a bucket (parameters in reverse registration order — about the
// order their gradients arrive — bucket_cap_mb each, 25 MiB by default)
// and buckets are all-reduced
// asynchronously, in order, as soon as all their gradients are in, so the
// communication overlaps the rest of backward; before backward
// returns (an autograd callback) every bucket is waited for and each .grad
// holds the average over the ranks. no_sync() skips the reduction: gradients
// accumulate locally and the next synchronised backward reduces the sum.
// The Python DistributedDataParallel runs on this same reducer.
#pragma once

#include <loom/distributed/distributed.h>
#include <loom/nn/module.h>
#include <loom/options.h>
#include <loom/tensor.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace loom::nn::parallel {

struct DistributedDataParallelOptions {
  // The group to average over (from new_group); nullptr: the default group.
  LOOM_ARG(std::shared_ptr<distributed::ProcessGroup>, process_group);
  // A bucket's size; it is all-reduced as one tensor once all its
  // gradients are in.
  LOOM_ARG(double, bucket_cap_mb) = 25.0;
  // Parameters that get no gradient in a backward pass take part as their
  // .grad (zeros when they have none) instead of being an error; one no
  // rank used keeps its .grad as it was (none stays none), as PyTorch's.
  LOOM_ARG(bool, find_unused_parameters) = false;
  // Broadcast the buffers (batch norm's running statistics) from the first
  // rank before each forward that will be reduced.
  LOOM_ARG(bool, broadcast_buffers) = true;
  // After each synchronised backward, .grad is a view of its bucket (no
  // copy out of the bucket, no gradient memory of its own), as PyTorch's.
  LOOM_ARG(bool, gradient_as_bucket_view) = false;
};

// The part of DistributedDataParallel that does not depend on the module's
// type: buckets, the gradient hooks, the all-reduces and the callback that
// completes them. One per wrapped module; removes its hooks when destroyed.
class GradientReducer {
 public:
  // `parameters`: the module's, by name (those that do not require grad
  // are left alone); `buffers`: broadcast at construction and, with
  // broadcast_buffers, before each synchronised forward.
  GradientReducer(std::vector<std::pair<std::string, Tensor>> parameters, std::vector<Tensor> buffers,
                  const DistributedDataParallelOptions& options);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Called by forward: broadcasts the buffers when due.
  void before_forward();
  // While false, backward passes leave gradients unreduced (no_sync).
  void set_require_sync(bool on) { require_sync_ = on; }
  bool require_sync() const { return require_sync_; }

  // Parameter indices (into the parameters that require grad, in
  // registration order) of each bucket, in the order buckets are reduced.
  std::vector<std::vector<size_t>> bucket_indices() const;
  // Each bucket's flat tensor (what gradient_as_bucket_view's .grad views).
  std::vector<Tensor> bucket_tensors() const;

 private:
  struct Param;
  struct Bucket;
  Tensor on_gradient(size_t index, const Tensor& grad);
  // Starts the all-reduce of every complete bucket from next_bucket_ on,
  // stopping at the first incomplete one.
  void launch_ready();
  // Broadcasts `tensors` from the group's first rank, one collective per
  // dtype and device.
  void broadcast_coalesced(std::vector<Tensor>& tensors);
  void finalize();
  void reset_pass();

  DistributedDataParallelOptions options_;
  distributed::ProcessGroup* group_;
  std::vector<Param> params_;
  std::vector<Bucket> buckets_;
  std::vector<Tensor> buffers_;
  // Read by gradient hooks, which may run on the engine's device threads.
  std::atomic<bool> require_sync_{true};
  // Hooks may run on the engine's device threads.
  std::mutex mutex_;
  bool callback_queued_ = false;
  size_t next_bucket_ = 0;  // the first bucket not started in this pass
};

// Wraps a module holder (nn::Sequential, nn::Linear, ...) or a
// shared_ptr to a module. Calls go to the module's forward; copies share
// one reducer.
template <class ModuleType>
class DistributedDataParallel {
 public:
  explicit DistributedDataParallel(ModuleType module, const DistributedDataParallelOptions& options = {})
      : module_(std::move(module)),
        reducer_(std::make_shared<GradientReducer>(named(module_->named_parameters()), module_->buffers(),
                                                   options)) {}

  template <class... Args>
  decltype(auto) forward(Args&&... args) {
    reducer_->before_forward();
    return module_->forward(std::forward<Args>(args)...);
  }
  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    return forward(std::forward<Args>(args)...);
  }

  ModuleType& module() { return module_; }
  GradientReducer& reducer() { return *reducer_; }

  // While alive, backward passes accumulate gradients locally (gradient
  // accumulation); the first backward after it reduces the sum.
  class NoSync {
   public:
    explicit NoSync(GradientReducer& r) : reducer_(r), old_(r.require_sync()) { r.set_require_sync(false); }
    ~NoSync() { reducer_.set_require_sync(old_); }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    GradientReducer& reducer_;
    bool old_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(*reducer_); }

 private:
  template <class Named>
  static std::vector<std::pair<std::string, Tensor>> named(const Named& items) {
    std::vector<std::pair<std::string, Tensor>> out;
    for (const auto& item : items) out.emplace_back(item.key(), item.value());
    return out;
  }

  ModuleType module_;
  std::shared_ptr<GradientReducer> reducer_;
};

}  // namespace loom::nn::parallel
