// meta.h (core-internal) — the autograd record of one tensor, and the
// functions that read and rewrite a tensor's place in the graph.
#pragma once

#include <loom/autograd.h>

#include <atomic>
#include <mutex>

namespace loom::autograd {

struct AutogradMeta : loom::detail::Pooled<AutogradMeta> {
  // The node that produced this tensor (nullptr for a leaf), and which of
  // its outputs this tensor is.
  NodePtr grad_fn;
  uint32_t output_nr = 0;
  // A leaf's AccumulateGrad, made on first use and kept while the leaf lives
  // (so graphs built over and over reuse it). It points back at the leaf
  // without owning it; ~TensorImpl tells it the leaf is gone. Set once
  // under accumulator_mutex(); read lock-free through the atomic.
  NodePtr grad_accumulator_owner;
  std::atomic<Node*> grad_accumulator{nullptr};
  Tensor grad;
  bool retains_grad = false;
  // retain_grad()'s hook, removed when this tensor dies (it points at it).
  NodePtr retain_hook_node;
  int64_t retain_hook_id = 0;
  // Hooks of a leaf, run by its AccumulateGrad (a non-leaf's hooks live on
  // its grad_fn as pre-hooks).
  struct Hook {
    int64_t id;
    GradHook fn;
  };
  std::vector<Hook> hooks;
  // For a view: the storage version its grad_fn was made for. A later
  // in-place write (through the base or another view) makes it stale, and
  // the grad_fn is rebuilt from the base's.
  uint32_t attr_version = 0;
};

namespace detail {

// Guards the creation of AutogradMeta::grad_accumulator.
std::mutex& accumulator_mutex();

// The edge a gradient for `t` must flow into: its grad_fn, its leaf's
// AccumulateGrad, or none when it does not require grad. Rebuilds a stale
// view's grad_fn first.
Edge gradient_edge(const Tensor& t);
// Makes `t` output `edge.input_nr` of `edge.fn` (requires_grad follows).
void set_history(const Tensor& t, const Edge& edge);
// After an in-place op on `self` whose new value is output `edge` of a node:
// moves `self` (and, for a view, its base) to that history.
void rebase_history(const Tensor& self, const Edge& edge);
// Makes `view` (just made from `input`) differentiable: a view node when
// `input` requires grad. `expand` views sum their gradient back.
void record_view(const Tensor& input, const Tensor& view, const char* name, bool expand);
// The next creation number for a node (thread-local counter).
uint64_t next_sequence_nr();

// The gradient reduced to `sizes` (summing broadcast dims), cast to `dtype`
// and moved to `device`, as the input it flows into expects.
Tensor reduce_to_input(Tensor grad, IntArrayRef sizes, DType dtype, Device device);

}  // namespace detail
}  // namespace loom::autograd
