// graph.cpp — grad mode, nodes, and a tensor's place in the graph: its
// gradient edge, setting and rebasing history, views.
#include "nodes.h"

#include <loom/ops.h>
#include <loom/ops/indexing.h>

#include <algorithm>

namespace loom::autograd {

namespace {
thread_local bool grad_enabled LOOM_FAST_TLS = true;
thread_local uint64_t sequence_counter LOOM_FAST_TLS = 0;
std::atomic<int64_t> hook_ids{1};
}  // namespace

bool GradMode::is_enabled() { return grad_enabled; }
void GradMode::set_enabled(bool enabled) { grad_enabled = enabled; }

Node::Node() : sequence_nr_(detail::next_sequence_nr()) {}

// A long chain (an RNN unrolled over many steps) would free node after node
// recursively and overflow the stack. Children are parked instead and freed
// one at a time by the outermost destructor.
Node::~Node() {
  // Only a child this node holds the last reference to dies with it.
  bool last_ref = false;
  for (const Edge& e : next_edges_) last_ref = last_ref || (e.fn && e.fn->use_count() == 1);
  if (!last_ref) return;
  thread_local std::vector<NodePtr> parked;
  thread_local bool draining LOOM_FAST_TLS = false;
  std::vector<NodePtr>& stack = parked;
  for (Edge& e : next_edges_)
    if (e.fn) stack.push_back(std::move(e.fn));
  if (draining) return;
  draining = true;
  while (!stack.empty()) {
    NodePtr last = std::move(stack.back());
    stack.pop_back();
  }  // `last` dies here, parking its own children
  draining = false;
}

int64_t Node::add_pre_hook(uint32_t input_nr, GradHook hook, bool run_last) {
  const int64_t id = hook_ids.fetch_add(1);
  pre_hooks_.push_back({id, input_nr, std::move(hook), run_last});
  return id;
}

bool Node::remove_pre_hook(int64_t id) {
  auto it = std::find_if(pre_hooks_.begin(), pre_hooks_.end(), [&](const PreHook& h) { return h.id == id; });
  if (it == pre_hooks_.end()) return false;
  pre_hooks_.erase(it);
  return true;
}

void Node::run_pre_hooks(std::vector<Tensor>& grads) const {
  for (const bool last : {false, true}) {
    for (const auto& h : pre_hooks_) {
      if (h.run_last != last || h.input_nr >= grads.size() || !grads[h.input_nr].defined()) continue;
      Tensor r = h.fn(grads[h.input_nr]);
      if (r.defined()) grads[h.input_nr] = std::move(r);
    }
  }
}

namespace detail {

uint64_t next_sequence_nr() { return sequence_counter++; }

std::mutex& accumulator_mutex() {
  static std::mutex m;
  return m;
}

int64_t next_hook_id() { return hook_ids.fetch_add(1); }

OutputMeta meta_of(const Tensor& t) { return {DimVector(t.sizes()), t.dtype(), t.device()}; }

namespace {

NodePtr grad_accumulator(const Tensor& leaf) {
  AutogradMeta& m = leaf.impl()->ensure_autograd_meta();
  if (Node* acc = m.grad_accumulator.load(std::memory_order_acquire)) return NodePtr(acc);
  std::lock_guard lock(accumulator_mutex());
  if (Node* acc = m.grad_accumulator.load(std::memory_order_acquire)) return NodePtr(acc);
  m.grad_accumulator_owner = loom::detail::make_intrusive<AccumulateGrad>(leaf.impl());
  m.grad_accumulator.store(m.grad_accumulator_owner.get(), std::memory_order_release);
  return m.grad_accumulator_owner;
}

// A view's grad_fn, rebuilt from its base's current one.
void refresh_view(TensorImpl* view, AutogradMeta& m) {
  TensorImpl* base = view->view_base();
  Tensor base_t{loom::detail::IntrusivePtr<TensorImpl>(base)};
  Tensor view_t{loom::detail::IntrusivePtr<TensorImpl>(view)};
  auto node = loom::detail::make_intrusive<ViewNode>("AsStridedBackward0", Geometry::of(base_t),
                                                     Geometry::of(view_t), false);
  node->next_edges_.push_back(gradient_edge(base_t));
  node->input_meta_.push_back(meta_of(view_t));
  m.grad_fn = std::move(node);
  m.output_nr = 0;
  m.attr_version = view->storage()->version();
  view->set_requires_grad_flag(true);
}

}  // namespace

Edge gradient_edge(const Tensor& t) {
  TensorImpl* impl = t.impl();
  if (impl->view_base() && impl->view_base()->requires_grad()) {
    AutogradMeta& m = impl->ensure_autograd_meta();
    if (!m.grad_fn || m.attr_version != impl->storage()->version()) refresh_view(impl, m);
    return {m.grad_fn, m.output_nr};
  }
  if (!impl->requires_grad()) return {};
  AutogradMeta* m = impl->autograd_meta();
  if (m && m->grad_fn) return {m->grad_fn, m->output_nr};
  return {grad_accumulator(t), 0};
}

void set_history(const Tensor& t, const Edge& edge) {
  TensorImpl* impl = t.impl();
  AutogradMeta& m = impl->ensure_autograd_meta();
  m.grad_fn = edge.fn;
  m.output_nr = edge.input_nr;
  m.attr_version = impl->storage()->version();
  impl->set_requires_grad_flag(edge.valid());
}

void rebase_history(const Tensor& self, const Edge& edge) {
  TensorImpl* base = self.impl()->view_base();
  if (!base) {
    set_history(self, edge);
    return;
  }
  // A write through a view: the base's new history is CopySlices, and the
  // view's grad_fn becomes a view of that.
  Tensor base_t{loom::detail::IntrusivePtr<TensorImpl>(base)};
  auto node = loom::detail::make_intrusive<CopySlices>(Geometry::of(base_t), Geometry::of(self));
  node->next_edges_.push_back(gradient_edge(base_t));
  node->next_edges_.push_back(edge);
  node->input_meta_.push_back(meta_of(base_t));
  set_history(base_t, {std::move(node), 0});
  AutogradMeta& m = self.impl()->ensure_autograd_meta();
  refresh_view(self.impl(), m);
}

void record_view(const Tensor& input, const Tensor& view, const char* name, bool expand) {
  TensorImpl* in = input.impl();
  // A view that is itself a leaf requiring grad (a view made
  // requires_grad_() after the fact) roots its own views: its gradient is
  // its own, not its base's, and in-place writes through them must be
  // refused as writes to a leaf.
  const AutogradMeta* m = in->autograd_meta();
  const bool grad_leaf = in->requires_grad() && (!m || !m->grad_fn);
  TensorImpl* base = in->view_base() && !grad_leaf ? in->view_base() : in;
  view.impl()->set_view_base(loom::detail::IntrusivePtr<TensorImpl>(base));
  // No name: the caller records one node for several views (split).
  if (!in->requires_grad() || !name) return;
  auto node = loom::detail::make_intrusive<ViewNode>(name, Geometry::of(input), Geometry::of(view), expand);
  node->next_edges_.push_back(gradient_edge(input));
  node->input_meta_.push_back(meta_of(view));
  set_history(view, {std::move(node), 0});
}

void record_function(std::string name, const std::vector<Tensor>& inputs,
                     const std::vector<Tensor>& outputs, FunctionNode::Fn fn) {
  if (!GradMode::is_enabled()) return;
  bool any = false;
  for (const auto& t : inputs) any = any || (t.defined() && t.requires_grad());
  if (!any) return;
  auto node = loom::detail::make_intrusive<FunctionNode>(std::move(name), std::move(fn));
  for (const auto& t : inputs) {
    node->next_edges_.push_back(t.defined() ? gradient_edge(t) : Edge{});
    node->input_of_.push_back(t.defined() ? meta_of(t) : OutputMeta{});
  }
  for (const auto& t : outputs) node->input_meta_.push_back(meta_of(t));
  for (size_t i = 0; i < outputs.size(); ++i)
    if (is_floating_point(outputs[i].dtype())) set_history(outputs[i], {node, static_cast<uint32_t>(i)});
}

Tensor reduce_to_input(Tensor grad, IntArrayRef sizes, DType dtype, Device device) {
  if (!(grad.sizes() == sizes)) grad = sum_to(grad, sizes);
  if (grad.dtype() != dtype) grad = grad.to(dtype);
  if (grad.device() != device) grad = grad.to(device);
  return grad;
}

}  // namespace detail

void record_custom_function(std::string name, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& outputs, CustomBackward backward) {
  detail::record_function(std::move(name), inputs, outputs, std::move(backward));
}

Tensor sum_to(const Tensor& grad, IntArrayRef sizes) {
  const int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  LOOM_CHECK(lead >= 0, "autograd: gradient of shape ", shape_str(grad.sizes()),
             " cannot be summed to shape ", shape_str(sizes));
  DimVector dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t g = grad.sizes()[lead + static_cast<int64_t>(i)];
    if (sizes[i] == 1 && g != 1) dims.push_back(lead + static_cast<int64_t>(i));
    else
      LOOM_CHECK(sizes[i] == g, "autograd: gradient of shape ", shape_str(grad.sizes()),
                 " cannot be summed to shape ", shape_str(sizes));
  }
  if (dims.empty()) return grad.dim() == static_cast<int64_t>(sizes.size()) ? grad : grad.reshape(sizes);
  return loom::sum(grad, dims, /*keepdim=*/true).reshape(sizes);
}

Tensor unsqueeze_reduced(const Tensor& grad, IntArrayRef dims, int64_t ndim, bool keepdim) {
  if (keepdim || ndim == 0) return grad;
  Tensor g = grad;
  if (dims.empty()) {  // a full reduction
    DimVector ones(static_cast<size_t>(ndim), 1);
    return g.reshape(ones);
  }
  DimVector sorted;
  for (int64_t d : dims) sorted.push_back(d < 0 ? d + ndim : d);
  std::sort(sorted.begin(), sorted.end());
  for (int64_t d : sorted) g = g.unsqueeze(d);
  return g;
}

// ---- nodes --------------------------------------------------------------------------

AccumulateGrad::AccumulateGrad(TensorImpl* leaf) : leaf_(leaf) {
  input_meta_.push_back({DimVector(leaf->sizes()), leaf->dtype(), leaf->device()});
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grads) {
  Tensor g = std::move(grads[0]);
  if (!leaf_) return {};  // the leaf is gone: nobody can read its .grad
  const Tensor leaf{loom::detail::IntrusivePtr<TensorImpl>(leaf_)};
  AutogradMeta& m = leaf_->ensure_autograd_meta();
  for (const auto& h : m.hooks) {
    if (!g.defined()) break;
    Tensor r = h.fn(g);
    if (r.defined()) g = std::move(r);
  }
  if (!g.defined()) return {};
  LOOM_CHECK(g.sizes() == leaf.sizes(), "autograd: gradient of shape ", shape_str(g.sizes()),
             " does not match the leaf's shape ", shape_str(leaf.sizes()));
  if (GradMode::is_enabled()) {  // create_graph: keep .grad differentiable
    m.grad = m.grad.defined() ? m.grad + g : g;
  } else if (!m.grad.defined()) {
    // Keep the engine's buffer when nothing else holds it; else copy, so a
    // later accumulation cannot write into a tensor the user owns.
    const bool sole = g.impl()->use_count() == 1 && g.storage()->use_count() == 1;
    m.grad = sole && g.is_contiguous() ? g.detach() : g.clone();
  } else {
    m.grad.add_(g);
  }
  return {};
}

namespace {
// Whether two elements of `v` share a memory location: with its dims sorted
// by stride, each stride must step past everything the smaller ones span.
bool overlaps(const Geometry& v) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (size_t i = 0; i < v.sizes.size(); ++i) {
    if (v.sizes[i] == 0) return false;
    if (v.sizes[i] > 1) dims.emplace_back(v.strides[i], v.sizes[i]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t span = 0;  // the largest offset the smaller dims reach
  for (const auto& [stride, size] : dims) {
    if (stride <= span) return true;
    span += (size - 1) * stride;
  }
  return false;
}

// A geometry's dims of size above 1, as (size, stride).
using Dims = std::vector<std::pair<int64_t, int64_t>>;
Dims real_dims(const Geometry& g) {
  Dims out;
  for (size_t i = 0; i < g.sizes.size(); ++i)
    if (g.sizes[i] != 1) out.emplace_back(g.sizes[i], g.strides[i]);
  return out;
}

// Those dims with each merged into the one before it where the two step as
// one (outer stride = inner stride · inner size): two geometries with the
// same result visit the same memory in the same row-major order.
Dims coalesced(const Geometry& g) {
  Dims out;
  for (const auto& [size, stride] : real_dims(g)) {
    if (!out.empty() && out.back().second == stride * size) out.back() = {out.back().first * size, stride};
    else out.emplace_back(size, stride);
  }
  return out;
}

// Where a view is a rearrangement of all of its input's elements (no
// element shared), its gradient is the view's gradient rearranged back,
// with no buffer: a reshape when the view keeps the input's element order
// (view, reshape, flatten of a strided input), a permute when it permutes
// the input's dims (transpose, permute, squeeze/unsqueeze). Undefined when
// neither holds.
Tensor rearranged_back(const Tensor& g, const Geometry& input, const Geometry& view) {
  const int64_t n = shape_numel(input.sizes);
  if (n == 0 || shape_numel(view.sizes) != n || view.offset != input.offset || overlaps(input)) return Tensor();
  if (coalesced(view) == coalesced(input)) return g.reshape(input.sizes);
  const Dims vd = real_dims(view), id = real_dims(input);
  if (vd.size() != id.size()) return Tensor();
  // order[j]: the view dim that is input dim j (strides are distinct: no overlap).
  DimVector order, view_sizes;
  for (const auto& d : vd) view_sizes.push_back(d.first);
  for (const auto& d : id) {
    const auto at = std::find(vd.begin(), vd.end(), d);
    if (at == vd.end()) return Tensor();
    order.push_back(at - vd.begin());
  }
  return g.reshape(view_sizes).permute(order).reshape(input.sizes);
}

// The memory offset (from `rel`) of every element of `v`, row-major.
Tensor storage_indices(const Geometry& v, int64_t rel, Device device) {
  Tensor idx = loom::full({}, rel, DType::Int64, device);
  for (size_t i = 0; i < v.sizes.size(); ++i) {
    Tensor step = loom::arange(0, v.sizes[i] * v.strides[i], std::max<int64_t>(v.strides[i], 1),
                               DType::Int64, device);
    if (v.strides[i] == 0) step = loom::zeros({v.sizes[i]}, DType::Int64, device);
    idx = idx.unsqueeze(-1) + step;
  }
  return idx.reshape({-1});
}
}  // namespace

std::vector<Tensor> ViewNode::apply(std::vector<Tensor>&& grads) {
  const Tensor& g = grads[0];
  if (!g.defined()) return {Tensor()};
  if (expand_) return {sum_to(g, input_.sizes)};
  const int64_t in_numel = shape_numel(input_.sizes);
  if (Tensor r = rearranged_back(g, input_, view_); r.defined()) return {r};
  // Else place the view's gradient where its elements sit in the input.
  int64_t extent = 1;
  for (size_t i = 0; i < input_.sizes.size(); ++i)
    if (input_.sizes[i] > 0) extent += (input_.sizes[i] - 1) * input_.strides[i];
  if (in_numel == 0) extent = 0;
  Tensor buf = loom::zeros({extent}, g.dtype(), g.device());
  const int64_t rel = view_.offset - input_.offset;
  const bool shared_input = overlaps(input_);
  if (!overlaps(view_) && !shared_input) {
    buf.as_strided(view_.sizes, view_.strides, rel).copy_(g);
    return {buf.as_strided(input_.sizes, input_.strides, 0)};
  }
  // Several view elements share a memory location: their gradients add.
  buf = loom::index_add(buf, 0, storage_indices(view_, rel, g.device()), g.reshape({-1}));
  if (!shared_input) return {buf.as_strided(input_.sizes, input_.strides, 0)};
  // So do several input elements (an expanded input): each gets an even
  // share of its location's sum (as PyTorch's as_strided backward), which
  // the expand's node adds back up. Reading the sum whole would count it
  // once per sharer.
  const Tensor at = storage_indices(input_, 0, g.device());
  const Tensor ones = loom::ones({in_numel}, g.dtype(), g.device());
  const Tensor sharers = loom::index_add(loom::zeros({extent}, g.dtype(), g.device()), 0, at, ones);
  return {(loom::index_select(buf, 0, at) / loom::index_select(sharers, 0, at)).reshape(input_.sizes)};
}

std::vector<Tensor> CopySlices::apply(std::vector<Tensor>&& grads) {
  const Tensor& g = grads[0];
  if (!g.defined()) return {Tensor(), Tensor()};
  // Read the gradient in the base's own layout, where the view's geometry
  // means something.
  int64_t extent = 1;
  for (size_t i = 0; i < base_.sizes.size(); ++i)
    if (base_.sizes[i] > 0) extent += (base_.sizes[i] - 1) * base_.strides[i];
  Tensor buf = loom::empty({extent}, g.dtype(), g.device());
  Tensor in_base = buf.as_strided(base_.sizes, base_.strides, 0);
  in_base.copy_(g);
  const int64_t rel = view_.offset - base_.offset;
  Tensor slice = buf.as_strided(view_.sizes, view_.strides, rel).clone();
  buf.as_strided(view_.sizes, view_.strides, rel).zero_();
  return {buf.as_strided(base_.sizes, base_.strides, 0), slice};
}

std::vector<Tensor> FunctionNode::apply(std::vector<Tensor>&& grads) {
  std::vector<Tensor> out = fn_(grads);
  LOOM_CHECK(out.size() == next_edges_.size(), name_, ": backward returned ", out.size(),
             " gradients but the function has ", next_edges_.size(), " inputs");
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].defined() || !next_edges_[i].valid()) {
      out[i] = Tensor();
      continue;
    }
    const OutputMeta& in = input_of_[i];  // sum_to names a shape that does not fit
    out[i] = detail::reduce_to_input(std::move(out[i]), in.sizes, in.dtype, in.device);
  }
  return out;
}

std::vector<Tensor> NotImplementedNode::apply(std::vector<Tensor>&&) {
  throw Error(ErrorKind::Unsupported,
              loom::detail::cat("the derivative for '", op_,
                                "' is not implemented: it has no formula and no composite to "
                                "differentiate through"));
}

}  // namespace loom::autograd
