// nodes.h (core-internal) — the kinds of node the graph is made of.
#pragma once

#include "formula.h"

#include <deque>
#include <memory>
#include <string>

namespace loom::autograd {

// A tensor kept for backward, with the version it had when saved: using it
// after an in-place change is an error naming the node, never a silently
// wrong gradient. Only a leaf that requires grad is kept as itself (its
// gradient must reach its own AccumulateGrad; in-place ops refuse it, so
// its history never changes). Every other tensor is kept as a detached
// alias (same storage and version counter), because keeping the original
// would make a reference cycle the moment its history changes:
//   - an op's own output: output -> grad_fn -> this node -> output;
//   - an input that an in-place op later rebases (y = x * 2; z = y * w;
//     y.copy_(z): y -> CopyBackward -> MulBackward -> saved y), whether it
//     required grad when saved or not.
// A saved non-leaf gets the history it had when saved back on unpack (for
// an output: this node's output), so double backward sees the same graph.
class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  bool defined() const { return data_.defined() || released_; }
  // `owner` names the node in errors and is the grad_fn of a saved output.
  Tensor unpack(Node* owner, const char* what, size_t index) const;
  void release() {
    if (data_.defined()) released_ = true;
    data_ = Tensor();
    grad_fn_.reset();
  }

 private:
  Tensor data_;
  // A saved non-leaf input's place in the graph when saved (an output's
  // is the owner node's, given on unpack: holding it would be a cycle).
  NodePtr grad_fn_;
  uint32_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
};

// Non-tensor arguments of a forward call, copied so they outlive it (lists
// and strings point into the node's own storage).
class SavedValues {
 public:
  void assign(const LoomValue* values, size_t n);
  const LoomValue& operator[](size_t i) const { return values_[i]; }
  size_t size() const { return values_.size(); }

 private:
  loom::detail::SmallVector<LoomValue, 4> values_;
  // Copies of lists and strings, made only for calls that have them.
  struct Owned {
    std::vector<std::vector<int64_t>> ints;
    std::vector<std::vector<double>> floats;
    std::deque<std::string> strings;
  };
  std::unique_ptr<Owned> owned_;
};

struct InputInfo {
  DimVector sizes;
  DType dtype = DType::Float32;
  Device device;
};

// The node of an op with a Formula.
class FormulaNode final : public Node, public loom::detail::Pooled<FormulaNode> {
 public:
  FormulaNode(const Formula& f, const OpDef& op) : formula_(&f), op_(&op) {}
  std::string name() const override { return name_ ? name_ : formula_->node_name; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  void release_variables() override;

  const Formula* formula_;
  const char* name_ = nullptr;  // Formula::name_of's answer, when it has one
  const OpDef* op_;
  loom::detail::SmallVector<InputInfo, 3> inputs_;
  loom::detail::SmallVector<SavedVariable, 3> saved_inputs_;   // by argument
  loom::detail::SmallVector<SavedVariable, 1> saved_outputs_;  // by output
  SavedValues values_;
};

// The sink of a leaf: adds the gradient into its .grad, after its hooks.
// The leaf owns it (AutogradMeta::grad_accumulator_owner), not the other
// way round; ~TensorImpl calls leaf_gone().
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(TensorImpl* leaf);
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  void leaf_gone() { leaf_ = nullptr; }

 private:
  TensorImpl* leaf_;
};

// Where a view's elements sit in memory, relative to its own storage offset.
struct Geometry {
  DimVector sizes, strides;
  int64_t offset = 0;
  static Geometry of(const Tensor& t) {
    return {DimVector(t.sizes()), DimVector(t.strides()), t.storage_offset()};
  }
};

// A view's node: puts the view's gradient where its elements sit in the
// input (zeros elsewhere), or sums it back for an expand.
class ViewNode final : public Node {
 public:
  ViewNode(const char* name, Geometry input, Geometry view, bool expand)
      : name_(name), input_(std::move(input)), view_(std::move(view)), expand_(expand) {}
  std::string name() const override { return name_; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;

 private:
  const char* name_;
  Geometry input_, view_;
  bool expand_;
};

// The new grad_fn of a base after an in-place write through one of its
// views: the base's gradient outside the view flows to the base's old
// history, the part inside to the node that computed the written value.
class CopySlices final : public Node {
 public:
  CopySlices(Geometry base, Geometry view) : base_(std::move(base)), view_(std::move(view)) {}
  std::string name() const override { return "CopySlices"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;

 private:
  Geometry base_, view_;
};

// The node of an op that has neither formula nor composite: backward
// through it is an error naming the op.
class NotImplementedNode final : public Node {
 public:
  explicit NotImplementedNode(std::string op) : op_(std::move(op)) {}
  std::string name() const override { return "NotImplemented"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;

 private:
  std::string op_;
};

// A node whose backward is a C++ function (for the few differentiable
// operations that are not catalog ops, such as moving between devices).
class FunctionNode final : public Node {
 public:
  using Fn = CustomBackward;
  FunctionNode(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string name() const override { return name_; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  void release_variables() override {}

 private:
  std::string name_;
  Fn fn_;

 public:
  std::vector<OutputMeta> input_of_;  // each input's shape, dtype, device
};

namespace detail {
// Records `fn` as the grad_fn of `outputs`, with an edge per input, when
// grad mode is on and an input requires grad.
void record_function(std::string name, const std::vector<Tensor>& inputs,
                     const std::vector<Tensor>& outputs, FunctionNode::Fn fn);
// Output metadata for a node's input slot from a tensor.
OutputMeta meta_of(const Tensor& t);
}  // namespace detail

}  // namespace loom::autograd
