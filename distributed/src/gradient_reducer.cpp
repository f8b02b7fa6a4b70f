// GradientReducer (loom/nn/parallel/distributed.h): DistributedDataParallel's
// buckets, gradient hooks and all-reduces.
#include <loom/autograd.h>
#include <loom/error.h>
#include <loom/nn/parallel/distributed.h>
#include <loom/ops.h>


namespace loom::nn::parallel {

// A parameter that requires grad, and where its gradient goes in its bucket.
struct GradientReducer::Param {
  std::string name;
  Tensor tensor;
  size_t bucket = 0;
  int64_t offset = 0;  // elements into the bucket's flat tensor
  int64_t hook = -1;
  bool ready = false;  // its slot in the bucket is filled for this pass
  bool used = false;   // its gradient hook ran in this pass (used here)
};

// Parameters of one dtype and device whose gradients are reduced as one flat
// tensor: allocated once, refilled each synchronised backward pass.
struct GradientReducer::Bucket {
  std::vector<size_t> members;  // indices into params_
  double bytes = 0;              // of its members' gradients
  int64_t numel = 0;             // elements, likewise
  Tensor flat;
  size_t pending = 0;  // members whose gradient has not arrived this pass
  // Declared after `flat`: destroyed first, and a Work's destructor waits
  // for the collective still writing into `flat`.
  std::shared_ptr<distributed::Work> work;
};

namespace {

distributed::ProcessGroup& group_of(const DistributedDataParallelOptions& options) {
  if (!distributed::is_initialized())
    throw Error(ErrorKind::InvalidArgument,
                "DistributedDataParallel: call loom::distributed::init_process_group first");
  return options.process_group() ? *options.process_group() : distributed::default_group();
}

}  // namespace

GradientReducer::GradientReducer(std::vector<std::pair<std::string, Tensor>> parameters, std::vector<Tensor> buffers,
                                 const DistributedDataParallelOptions& options)
    : options_(options), group_(&group_of(options)), buffers_(std::move(buffers)) {
  LOOM_CHECK(options.bucket_cap_mb() > 0, "DistributedDataParallel: bucket_cap_mb must be positive, got ",
             options.bucket_cap_mb());
  {
    autograd::NoGradGuard no_grad;
    std::vector<Tensor> params;
    for (auto& [name, p] : parameters) params.push_back(p);
    broadcast_coalesced(params);
    broadcast_coalesced(buffers_);
  }
  for (auto& [name, p] : parameters)
    if (p.requires_grad()) params_.push_back(Param{name, p});

  // Buckets from the last parameter back: gradients arrive about in
  // reverse order of registration, so the first bucket fills first. A
  // bucket holds one dtype on one device (it is one tensor). (PyTorch caps
  // its first bucket at 1 MiB so communication starts early; measured on
  // the 2-core machine it cost 2-3 ms a step on a 64-1024-1024-10 MLP, one
  // all-reduce more with no core free to overlap it: every bucket gets the
  // one cap here.)
  const double cap = options.bucket_cap_mb() * 1024 * 1024;
  for (size_t k = params_.size(); k-- > 0;) {
    Param& p = params_[k];
    const double bytes = static_cast<double>(p.tensor.numel()) * static_cast<double>(p.tensor.element_size());
    bool fresh = buckets_.empty();
    if (!fresh) {
      const Bucket& last = buckets_.back();
      const Tensor& first = params_[last.members.front()].tensor;
      fresh = first.dtype() != p.tensor.dtype() || first.device() != p.tensor.device() || last.bytes + bytes > cap;
    }
    if (fresh) buckets_.emplace_back();
    Bucket& b = buckets_.back();
    p.bucket = buckets_.size() - 1;
    p.offset = b.numel;
    b.members.push_back(k);
    b.bytes += bytes;
    b.numel += p.tensor.numel();
  }
  for (Bucket& b : buckets_) {
    const Tensor& first = params_[b.members.front()].tensor;
    b.flat = zeros({b.numel}, TensorOptions(first.dtype()).device(first.device()));
  }
  reset_pass();
  for (size_t k = 0; k < params_.size(); ++k)
    params_[k].hook = params_[k].tensor.register_hook([this, k](const Tensor& grad) { return on_gradient(k, grad); });
}

GradientReducer::~GradientReducer() {
  // A work still in flight (a backward that threw) is waited for by its
  // destructor, which runs before its bucket's tensor goes (Bucket's order).
  for (Param& p : params_)
    if (p.hook >= 0) p.tensor.remove_hook(p.hook);
}

std::vector<std::vector<size_t>> GradientReducer::bucket_indices() const {
  std::vector<std::vector<size_t>> out;
  for (const Bucket& b : buckets_) out.push_back(b.members);
  return out;
}

void GradientReducer::broadcast_coalesced(std::vector<Tensor>& tensors) {
  // One broadcast per dtype and device rather than one per tensor: a
  // ResNet's batch norms hold three buffers each, broadcast before every
  // forward, and each collective costs a round trip. From the group's first
  // rank, as PyTorch's.
  std::vector<bool> done(tensors.size(), false);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (done[i]) continue;
    std::vector<size_t> same;
    for (size_t j = i; j < tensors.size(); ++j)
      if (!done[j] && tensors[j].dtype() == tensors[i].dtype() && tensors[j].device() == tensors[i].device()) {
        same.push_back(j);
        done[j] = true;
      }
    if (same.size() == 1) {
      group_->broadcast(tensors[i], 0, /*async_op=*/false);
      continue;
    }
    std::vector<Tensor> flat;
    for (size_t j : same) flat.push_back(tensors[j].reshape({-1}));
    Tensor all = cat(flat, 0);
    group_->broadcast(all, 0, /*async_op=*/false);
    int64_t offset = 0;
    for (size_t j : same) {
      const int64_t n = tensors[j].numel();
      tensors[j].copy_(all.narrow(0, offset, n).view(tensors[j].sizes()));
      offset += n;
    }
  }
}

std::vector<Tensor> GradientReducer::bucket_tensors() const {
  std::vector<Tensor> out;
  for (const Bucket& b : buckets_) out.push_back(b.flat);
  return out;
}

void GradientReducer::before_forward() {
  if (!options_.broadcast_buffers() || !require_sync_ || !autograd::GradMode::is_enabled()) return;
  autograd::NoGradGuard no_grad;
  broadcast_coalesced(buffers_);
}

void GradientReducer::reset_pass() {
  for (Param& p : params_) p.ready = p.used = false;
  for (Bucket& b : buckets_) {
    b.pending = b.members.size();
    b.work.reset();
  }
  next_bucket_ = 0;
  callback_queued_ = false;
}

Tensor GradientReducer::on_gradient(size_t index, const Tensor& grad) {
  if (!require_sync_) return grad;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!callback_queued_) {
    autograd::queue_callback([this] { finalize(); });
    callback_queued_ = true;
  }
  Param& p = params_[index];
  Bucket& b = buckets_[p.bucket];
  autograd::NoGradGuard no_grad;
  Tensor slot = b.flat.narrow(0, p.offset, p.tensor.numel()).view(p.tensor.sizes());
  if (p.used) {
    // A second gradient for the same parameter in one pass (the engine
    // normally sums them first): it joins its bucket unless that is gone.
    LOOM_CHECK(!b.work, "DistributedDataParallel: parameter '", p.name,
               "' got a second gradient after its bucket was reduced in this backward pass");
    slot.add_(grad);
    return grad;
  }
  // The slot gets what .grad will hold once autograd accumulates this
  // gradient: the sum under no_sync passes is reduced too.
  Tensor& old = p.tensor.mutable_grad();
  if (options_.gradient_as_bucket_view() && old.defined()) {
    // .grad may be the slot itself (last pass's view): sum there, and leave
    // .grad empty so autograd's accumulation after this hook does not add
    // the gradient a second time; finalize makes .grad the slot again.
    slot.copy_(old);
    slot.add_(grad);
    old = Tensor();
  } else {
    slot.copy_(grad);
    if (old.defined()) slot.add_(old);
  }
  p.ready = p.used = true;
  --b.pending;
  launch_ready();
  return grad;
}

void GradientReducer::launch_ready() {
  // In bucket order, the same on every rank whatever order the gradients
  // came in: ranks must issue their all-reduces alike (a different order
  // is a desynchronised group).
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    Bucket& b = buckets_[next_bucket_++];
    b.work = group_->all_reduce(b.flat, distributed::ReduceOp::Avg, /*async_op=*/true);
  }
}

void GradientReducer::finalize() {
  std::lock_guard<std::mutex> lock(mutex_);
  struct ResetOnExit {
    GradientReducer* r;
    ~ResetOnExit() { r->reset_pass(); }
  } reset{this};
  autograd::NoGradGuard no_grad;
  // Buckets not started hold parameters that got no gradient this pass.
  std::string missing;
  for (const Param& p : params_)
    if (!p.used) missing += (missing.empty() ? "" : ", ") + p.name;
  if (!missing.empty() && !options_.find_unused_parameters())
    throw Error(ErrorKind::InvalidArgument,
                "DistributedDataParallel: parameters got no gradient in this backward pass: " + missing +
                    "; pass find_unused_parameters(true) if the model does not use every parameter in every step");
  for (Bucket& b : buckets_) {
    if (b.pending == 0) continue;
    for (size_t m : b.members) {
      Param& p = params_[m];
      if (p.ready) continue;
      // Its slot takes part as its accumulated .grad, or zeros.
      Tensor slot = b.flat.narrow(0, p.offset, p.tensor.numel()).view(p.tensor.sizes());
      Tensor& g = p.tensor.mutable_grad();
      if (g.defined() && g.data_ptr() == slot.data_ptr()) g = g.clone();  // a bucket view: keep its value apart
      if (g.defined())
        slot.copy_(g);
      else
        slot.zero_();
      p.ready = true;
    }
    b.pending = 0;
  }
  launch_ready();
  // Which parameters some rank used (PyTorch's used map): the others keep
  // their .grad as it is (none stays none). One more collective, after the
  // buckets on every rank.
  Tensor used;
  std::shared_ptr<distributed::Work> used_work;
  if (options_.find_unused_parameters()) {
    std::vector<int32_t> flags;
    for (const Param& p : params_) flags.push_back(p.used ? 1 : 0);
    used = loom::tensor(flags);
    used_work = group_->all_reduce(used, distributed::ReduceOp::Max, /*async_op=*/true);
  }
  for (Bucket& b : buckets_) b.work->wait();
  std::vector<int32_t> used_anywhere;
  if (used_work) {
    used_work->wait();
    used_anywhere = used.to_vector<int32_t>();
  }
  for (size_t k = 0; k < params_.size(); ++k) {
    if (!used_anywhere.empty() && !used_anywhere[k]) continue;
    Param& p = params_[k];
    const Bucket& b = buckets_[p.bucket];
    Tensor avg = b.flat.narrow(0, p.offset, p.tensor.numel()).view(p.tensor.sizes());
    Tensor& g = p.tensor.mutable_grad();
    if (options_.gradient_as_bucket_view())
      g = avg;  // the bucket's memory itself: no copy
    else if (g.defined())
      g.copy_(avg);
    else
      g = avg.clone();
  }
}

}  // namespace loom::nn::parallel
