// tensor_autograd.cpp — the autograd side of Tensor: requires_grad, grad,
// grad_fn, detach, hooks, backward.
#include "nodes.h"
#include "view_ops.h"

#include <loom/ops.h>

namespace loom {

using autograd::AutogradMeta;

TensorImpl::~TensorImpl() {
  if (!autograd_) return;
  if (autograd_->retain_hook_node) autograd_->retain_hook_node->remove_pre_hook(autograd_->retain_hook_id);
  if (autograd_->grad_accumulator_owner)
    static_cast<autograd::AccumulateGrad&>(*autograd_->grad_accumulator_owner).leaf_gone();
}

AutogradMeta& TensorImpl::ensure_autograd_meta() {
  if (!autograd_) autograd_ = std::make_unique<AutogradMeta>();
  return *autograd_;
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  TensorImpl* impl = checked();
  LOOM_CHECK(is_leaf(), "requires_grad_: you can only change requires_grad flags of leaf tensors; "
                        "this one has grad_fn ", grad_fn()->name(),
             ". Use detach() to get a leaf that shares its data.");
  LOOM_CHECK(!requires_grad || is_floating_point(), "requires_grad_: only tensors of floating point "
                                                    "dtype can require gradients, got ", name(dtype()));
  impl->set_requires_grad_flag(requires_grad);
  if (requires_grad) impl->ensure_autograd_meta();
  return *this;
}

bool Tensor::is_leaf() const { return !grad_fn(); }

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  const AutogradMeta* m = checked()->autograd_meta();
  return m ? m->grad : undefined;
}

Tensor& Tensor::mutable_grad() { return checked()->ensure_autograd_meta().grad; }

detail::IntrusivePtr<autograd::Node> Tensor::grad_fn() const {
  TensorImpl* impl = checked();
  if (!impl->requires_grad()) return {};
  if (impl->view_base() && impl->view_base()->requires_grad())
    return autograd::detail::gradient_edge(*this).fn;  // rebuilds a stale view's
  const AutogradMeta* m = impl->autograd_meta();
  return m ? m->grad_fn : detail::IntrusivePtr<autograd::Node>();
}

uint32_t Tensor::output_nr() const {
  const AutogradMeta* m = checked()->autograd_meta();
  return m ? m->output_nr : 0;
}

Tensor Tensor::detach() const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("detach", *this, {});
  const TensorImpl* impl = checked();
  return Tensor(detail::make_intrusive<TensorImpl>(impl->storage(), impl->dtype(), impl->sizes(),
                                                   impl->strides(), impl->storage_offset()));
}

Tensor& Tensor::detach_() {
  TensorImpl* impl = checked();
  LOOM_CHECK(!impl->view_base() || !impl->view_base()->requires_grad(),
             "detach_: can't detach a view of a tensor that requires grad in place; use detach()");
  if (AutogradMeta* m = impl->autograd_meta()) {
    m->grad_fn.reset();
    m->output_nr = 0;
  }
  impl->set_requires_grad_flag(false);
  return *this;
}

Tensor& Tensor::set_data(const Tensor& data) {
  TensorImpl* impl = checked();
  LOOM_CHECK(data.defined(), "set_data: the new data is an undefined tensor");
  LOOM_CHECK(is_leaf(), "set_data: only a leaf's data can be replaced; this tensor has grad_fn ",
             grad_fn()->name());
  LOOM_CHECK(!impl->view_base(), "set_data: can't replace the data of a view");
  LOOM_CHECK(!requires_grad() || data.is_floating_point(),
             "set_data: a tensor that requires grad needs floating-point data, got ", name(data.dtype()));
  if (data.impl() == impl) return *this;
  const bool same_meta = data.dtype() == dtype() && data.device() == device() && data.sizes() == sizes();
  impl->set_data_from(*data.impl());
  // The leaf's AccumulateGrad remembers its dtype, device and shape (the
  // engine casts gradients to them): a changed leaf needs a fresh one, as
  // torch's set_data resets its grad accumulator.
  if (AutogradMeta* m = impl->autograd_meta(); m && !same_meta) {
    std::lock_guard<std::mutex> lock(autograd::detail::accumulator_mutex());
    if (!m->grad_accumulator_owner) return *this;
    static_cast<autograd::AccumulateGrad&>(*m->grad_accumulator_owner).leaf_gone();
    m->grad_accumulator.store(nullptr, std::memory_order_release);
    m->grad_accumulator_owner.reset();
  }
  return *this;
}

void Tensor::retain_grad() {
  LOOM_CHECK(requires_grad(), "retain_grad: can't retain_grad on a tensor that does not require grad");
  if (is_leaf()) return;  // leaves keep .grad anyway
  AutogradMeta& m = checked()->ensure_autograd_meta();
  if (m.retains_grad) return;
  m.retains_grad = true;
  // The hook points at this impl without owning it (that would be a cycle);
  // ~TensorImpl removes it.
  TensorImpl* self = checked();
  m.retain_hook_node = grad_fn();
  m.retain_hook_id = m.retain_hook_node->add_pre_hook(output_nr(), [self](const Tensor& g) {
    AutogradMeta& meta = self->ensure_autograd_meta();
    if (!meta.grad.defined()) meta.grad = autograd::GradMode::is_enabled() ? g : g.clone();
    else meta.grad = meta.grad + g;
    return Tensor();
  }, /*run_last=*/true);
}

bool Tensor::retains_grad() const {
  const AutogradMeta* m = checked()->autograd_meta();
  return m && m->retains_grad;
}

namespace autograd::detail {
int64_t next_hook_id();  // graph.cpp
}

int64_t Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) {
  LOOM_CHECK(requires_grad(), "register_hook: cannot register a hook on a tensor that doesn't "
                              "require gradient");
  if (is_leaf()) {
    const int64_t id = autograd::detail::next_hook_id();
    checked()->ensure_autograd_meta().hooks.push_back({id, std::move(hook)});
    return id;
  }
  return grad_fn()->add_pre_hook(output_nr(), std::move(hook));
}

void Tensor::remove_hook(int64_t id) {
  if (AutogradMeta* m = checked()->autograd_meta()) {
    auto& hs = m->hooks;
    for (auto it = hs.begin(); it != hs.end(); ++it)
      if (it->id == id) {
        hs.erase(it);
        return;
      }
  }
  if (auto fn = grad_fn()) fn->remove_pre_hook(id);
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

}  // namespace loom
