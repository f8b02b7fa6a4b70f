// formula.h (core-internal) — how an op of the catalog states its derivative.
//
//   LOOM_DERIVATIVE(mul_def, "MulBackward0", inputs(0, 1), none(),
//                   [](BackwardContext& c) {
//                     if (c.needs_grad(0)) c.set(0, c.grad() * c.input(1));
//                     if (c.needs_grad(1)) c.set(1, c.grad() * c.input(0));
//                   })
//
// sits next to the op's LOOM_CORE_OP. Formulas are written with loom ops, so
// they run on every device and are themselves differentiable (double
// backward). They need not undo broadcasting or dtype promotion: the node
// sums each gradient down to its input's shape and casts it to the input's
// dtype. Gradients for inputs that do not need one may be left unset.
//
// An op without a formula but with a composite is differentiated through
// the ops its composite calls. `LOOM_NOT_DIFFERENTIABLE(op)` marks an op
// whose outputs never require grad (argmax, comparisons, random draws).
#pragma once

#include "meta.h"

#include <loom/op_registry.h>
#include <loom/op_call.h>

#include <string_view>

namespace loom::autograd {

class FormulaNode;

// What a formula sees: the incoming gradients, the saved tensors and the
// non-tensor arguments of the forward call, and where to put its results.
class BackwardContext {
 public:
  BackwardContext(FormulaNode& node, std::vector<Tensor>& grads, std::vector<Tensor>& results, bool widen = false)
      : node_(node), grads_(grads), results_(results), widen_(widen) {}

  // The gradient of output `o` (zeros of its shape when none arrived).
  Tensor grad(size_t o = 0) const;
  bool has_grad(size_t o) const { return o < grads_.size() && grads_[o].defined(); }
  // Saved tensor argument `i` / output `o` (the formula must have asked to
  // save it); throws when it was modified in place since, or freed.
  Tensor input(size_t i) const;
  Tensor output(size_t o) const;
  // Whether saved argument `i` was given (false for an absent `Tensor?`).
  bool has_input(size_t i) const;

  // With Formula::in_float, grad(), input() and output() of a float16 or
  // bfloat16 node come as float32.
  // Tensor argument `i`: does it need a gradient, and its metadata.
  bool needs_grad(size_t i) const;
  size_t num_inputs() const;
  IntArrayRef input_sizes(size_t i) const;
  DType input_dtype(size_t i) const;
  Device device() const;
  IntArrayRef output_sizes(size_t o) const;

  // Non-tensor argument `i`, counted in schema order among non-tensors.
  const LoomValue& value(size_t i) const;
  Scalar scalar(size_t i) const;
  int64_t int_arg(size_t i) const;
  double float_arg(size_t i) const;
  bool bool_arg(size_t i) const;
  bool is_none(size_t i) const { return value(i).kind == LOOM_VALUE_NONE; }
  IntArrayRef int_list(size_t i) const;
  std::string_view str(size_t i) const;

  // The gradient for tensor argument `i`.
  void set(size_t i, Tensor grad);

 private:
  Tensor widened(Tensor t) const;

  FormulaNode& node_;
  std::vector<Tensor>& grads_;
  std::vector<Tensor>& results_;
  bool widen_ = false;  // float16/bfloat16 tensors to float32 (Formula::in_float)
};

using BackwardFn = void (*)(BackwardContext&);
// The node's name from the call, where one loom op serves several PyTorch
// overloads whose nodes PyTorch names apart (sum() is SumBackward0,
// sum(dim) SumBackward1). Runs before the forward, on the call as its
// caller made it (values not yet normalised by prepare).
using NameFn = const char* (*)(const OpCall& call);

struct Formula {
  const char* node_name = nullptr;  // "MulBackward0"
  uint32_t save_inputs = 0;         // bit i: tensor argument i is saved
  uint32_t save_outputs = 0;        // bit o: output o is saved
  BackwardFn backward = nullptr;    // nullptr: not differentiable
  // float16/bfloat16 grads and saved tensors reach the formula as float32
  // (the engine casts its results back): for formulas whose intermediates
  // would round badly or overflow in 16 bits (transcendental derivatives,
  // quotients, softmax), as PyTorch's kernels compute them in float.
  // LOOM_DERIVATIVE_IN_FLOAT sets it.
  bool in_float = false;
  // When set, names the node instead of node_name (LOOM_DERIVATIVE_NAME).
  NameFn name_of = nullptr;
  // The node keeps the values as the op's prepare left them (a generator
  // resolved to its {seed, offset} counters, say) rather than as the caller
  // gave them: LOOM_DERIVATIVE_SAVES_RESOLVED_VALUES. dropout's gradient
  // repeats the forward's draw with them.
  bool saves_resolved_values = false;
};

// Bit masks for Formula::save_inputs / save_outputs.
constexpr uint32_t none() { return 0; }
template <class... I>
constexpr uint32_t inputs(I... i) { return ((1u << i) | ... | 0u); }
template <class... I>
constexpr uint32_t outputs(I... i) { return ((1u << i) | ... | 0u); }
// Every tensor argument (for list ops such as cat, whose count varies).
inline constexpr uint32_t kAllInputs = 0xffffffffu;

namespace detail {
// Attaches `formula` to `op`; returns true (for static registration).
bool register_formula(const OpDef& op, Formula formula);
// Sets the NameFn of the formula `op` already has; returns true.
bool register_formula_name(const OpDef& op, NameFn name_of);
// Sets saves_resolved_values on the formula `op` already has; returns true.
bool register_formula_resolved_values(const OpDef& op);
}  // namespace detail

#define LOOM_AUTOGRAD_CONCAT2(a, b) a##b
#define LOOM_AUTOGRAD_CONCAT(a, b) LOOM_AUTOGRAD_CONCAT2(a, b)
// The formula is the trailing argument(s), so a lambda's commas need no
// parentheses.
#define LOOM_DERIVATIVE(op_accessor, name, save_inputs, save_outputs, ...)                  \
  [[maybe_unused]] static const bool LOOM_AUTOGRAD_CONCAT(loom_formula_, __LINE__) =         \
      ::loom::autograd::detail::register_formula(                                           \
          op_accessor(), ::loom::autograd::Formula{name, save_inputs, save_outputs, __VA_ARGS__});
#define LOOM_DERIVATIVE_IN_FLOAT(op_accessor, name, save_inputs, save_outputs, ...)         \
  [[maybe_unused]] static const bool LOOM_AUTOGRAD_CONCAT(loom_formula_, __LINE__) =         \
      ::loom::autograd::detail::register_formula(                                           \
          op_accessor(), ::loom::autograd::Formula{name, save_inputs, save_outputs, __VA_ARGS__, true});
// After the op's LOOM_DERIVATIVE, in the same file: names its nodes by call.
// The NameFn is the trailing argument(s), so a lambda's commas need no parentheses.
#define LOOM_DERIVATIVE_NAME(op_accessor, ...)                                              \
  [[maybe_unused]] static const bool LOOM_AUTOGRAD_CONCAT(loom_formula_name_, __LINE__) =    \
      ::loom::autograd::detail::register_formula_name(op_accessor(), __VA_ARGS__);
// After the op's LOOM_DERIVATIVE, in the same file (Formula::saves_resolved_values).
#define LOOM_DERIVATIVE_SAVES_RESOLVED_VALUES(op_accessor)                                  \
  [[maybe_unused]] static const bool LOOM_AUTOGRAD_CONCAT(loom_formula_resolved_, __LINE__) = \
      ::loom::autograd::detail::register_formula_resolved_values(op_accessor());
#define LOOM_NOT_DIFFERENTIABLE(op_accessor)                                                \
  [[maybe_unused]] static const bool LOOM_AUTOGRAD_CONCAT(loom_formula_, __LINE__) =         \
      ::loom::autograd::detail::register_formula(op_accessor(), ::loom::autograd::Formula{});

// ---- helpers formulas share ---------------------------------------------------------

// `grad` summed over the dims broadcasting added, so it has `sizes`.
Tensor sum_to(const Tensor& grad, IntArrayRef sizes);
// Re-inserts reduced dims (keepdim=false) so `grad` broadcasts against the
// reduction's input of rank `ndim`.
Tensor unsqueeze_reduced(const Tensor& grad, IntArrayRef dims, int64_t ndim, bool keepdim);

}  // namespace loom::autograd
