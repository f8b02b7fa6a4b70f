// loom/autograd.h — reverse-mode automatic differentiation.
//
//   auto w = loom::randn({3}).requires_grad_();
//   auto loss = (w * w).sum();
//   loss.backward();            // w.grad() == 2 * w
//
// Device-agnostic: every derivative formula is written with loom ops, so a
// backend that runs the forward ops (natively or through the CPU fallback)
// runs their backward too, and double backward, without code of its own.
//
// The graph: each op that runs while grad mode is on and some input requires
// grad records a Node (its "grad_fn", printed like PyTorch's <MulBackward0>)
// with one Edge per tensor input, pointing at that input's own grad_fn, or at
// an AccumulateGrad node for a leaf. The engine walks it from the roots in
// dependency order. Formulas sit next to their ops (core/src/ops/ops_*.cpp,
// LOOM_DERIVATIVE); docs/autograd.md explains the design.
#pragma once

#include <loom/tensor.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::autograd {

// ---- grad mode (per thread) ---------------------------------------------------

class GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Disables recording for its scope (torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// Enables recording for its scope (torch.enable_grad()).
class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(true); }
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

// ---- the graph ------------------------------------------------------------------

class Node;
using NodePtr = loom::detail::IntrusivePtr<Node>;

// Where a gradient goes: input `input_nr` of node `fn` (a forward op may
// have several outputs; its node takes one gradient per output).
struct Edge {
  NodePtr fn;
  uint32_t input_nr = 0;
  bool valid() const { return static_cast<bool>(fn); }
};

// Called with the gradient of a tensor; returns a replacement, or an
// undefined Tensor to keep it.
using GradHook = std::function<Tensor(const Tensor&)>;

// What a node needs to know of each forward output it takes a gradient for:
// a missing gradient is zeros of this shape.
struct OutputMeta {
  DimVector sizes;
  DType dtype = DType::Float32;
  Device device;
};

class Node : public loom::detail::RefCounted {
 public:
  Node();
  virtual ~Node();

  // "MulBackward0", as PyTorch names it.
  virtual std::string name() const = 0;
  // Gradients of the forward outputs (one per input of this node, undefined
  // where none arrived) to gradients of the forward inputs (one per edge,
  // undefined where there is none).
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grads) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void release_variables() {}

  const loom::detail::SmallVector<Edge, 4>& next_edges() const { return next_edges_; }
  size_t num_inputs() const { return input_meta_.size(); }
  const OutputMeta& input_meta(size_t i) const { return input_meta_[i]; }
  // Creation order: the engine runs later nodes first among ready ones.
  uint64_t sequence_nr() const { return sequence_nr_; }

  // Hooks on the gradient arriving at input `input_nr` (a tensor hook of the
  // non-leaf whose grad_fn this is). Returns an id for remove_pre_hook.
  // `run_last` hooks run after all others (retain_grad's, so .grad shows
  // what the other hooks made of the gradient, as in PyTorch 2).
  int64_t add_pre_hook(uint32_t input_nr, GradHook hook, bool run_last = false);
  bool remove_pre_hook(int64_t id);
  // Runs the pre-hooks of every input on `grads` (the engine calls this).
  void run_pre_hooks(std::vector<Tensor>& grads) const;

  // For subclasses and the recording code (inline: no heap per node).
  loom::detail::SmallVector<Edge, 4> next_edges_;
  loom::detail::SmallVector<OutputMeta, 1> input_meta_;

 private:
  struct PreHook {
    int64_t id;
    uint32_t input_nr;
    GradHook fn;
    bool run_last;
  };
  uint64_t sequence_nr_;
  std::vector<PreHook> pre_hooks_;
};

// ---- running backward -------------------------------------------------------------

// Accumulates d(sum_i <outputs[i], grad_outputs[i]>)/d(leaf) into the .grad
// of every leaf that requires grad. An undefined grad_output is ones for a
// one-element output (else an error). retain_graph defaults to create_graph.
void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

// Runs `fn` once the backward pass running on this thread has finished —
// every gradient computed and accumulated — before backward() returns
// (PyTorch's Variable._execution_engine.queue_callback). For hooks that
// start work during backward and must complete it before the caller sees
// the gradients (DistributedDataParallel's all-reduces). Throws when no
// backward pass runs on this thread.
void queue_callback(std::function<void()> fn);

// The gradients of `outputs` with respect to `inputs`, returned rather than
// accumulated into .grad. An input the outputs do not depend on is an error
// unless allow_unused (then its gradient is undefined).
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                         bool allow_unused = false);

// ---- custom differentiable functions -------------------------------------------------

// The backward of a custom function: gradients of its outputs (undefined
// where none arrived) to gradients of its inputs (undefined for none).
using CustomBackward = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Makes `outputs` (computed from `inputs` by code autograd did not see, for
// example under NoGradGuard or by a foreign library) differentiable: their
// grad_fn becomes a node named `name` whose backward is `backward`. Does
// nothing when grad mode is off or no input requires grad. This is what
// Python's loom.autograd.Function builds on.
void record_custom_function(std::string name, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& outputs, CustomBackward backward);

// ---- checking gradients -----------------------------------------------------------

using GradcheckFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

// Compares the analytical Jacobian (from backward) of `fn` at `inputs` with
// central finite differences, for every input that requires grad (they
// should be float64). Returns true, or throws loom::Error naming the output,
// the input, the element and both values.
bool gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
               const GradcheckOptions& options = {});
// The same for the gradients themselves: checks the backward of `fn`
// (built with create_graph) against finite differences of its forward.
bool gradgradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                   const GradcheckOptions& options = {});

}  // namespace loom::autograd
