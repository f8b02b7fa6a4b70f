// formula_node.cpp — saved tensors and values, and the node that runs an
// op's Formula: context accessors, then each gradient reduced to its input.
#include "nodes.h"
#include "core_op.h"
#include "../opmath.h"

#include <loom/ops.h>

namespace loom::autograd {

// ---- SavedVariable ---------------------------------------------------------------

SavedVariable::SavedVariable(const Tensor& t, bool is_output)
    : version_(t.storage()->version()), is_output_(is_output), requires_grad_(t.requires_grad()) {
  if (!is_output && requires_grad_ && t.is_leaf()) {
    data_ = t;  // a leaf that requires grad: its history cannot change
    return;
  }
  // Without the autograd record (see nodes.h: keeping it can be a cycle).
  data_ = t.detach();
  if (!requires_grad_) return;
  if (is_output) {
    output_nr_ = t.output_nr();
  } else {
    const Edge e = detail::gradient_edge(t);
    grad_fn_ = e.fn;
    output_nr_ = e.input_nr;
  }
}

Tensor SavedVariable::unpack(Node* owner, const char* what, size_t index) const {
  if (!data_.defined()) {
    LOOM_CHECK(!released_,
               "Trying to backward through the graph a second time (or directly access saved "
               "tensors after they have already been freed): ", owner->name(),
               " needs its saved ", what, " ", index,
               ", which the first backward freed. Pass retain_graph=true to the first backward "
               "if you need to run it again.");
    throw Error(loom::detail::cat(owner->name(), ": ", what, " ", index,
                                  " was not saved for backward (the formula must list it)"));
  }
  const uint32_t now = data_.storage()->version();
  LOOM_CHECK(now == version_,
             "one of the variables needed for gradient computation has been modified by an "
             "inplace operation: ", what, " ", index, " of ", owner->name(), " (a ",
             name(data_.dtype()), " tensor of shape ", shape_str(data_.sizes()), ") is at version ",
             now, "; expected version ", version_,
             " instead. Clone it before modifying it in place, or modify a copy.");
  if (!requires_grad_ || (!is_output_ && !grad_fn_)) return data_;
  // A saved non-leaf is again the output it was of its node (a saved
  // output this node's), for double backward.
  Tensor t = data_.detach();
  detail::set_history(t, {is_output_ ? NodePtr(owner) : grad_fn_, output_nr_});
  return t;
}

// ---- SavedValues -------------------------------------------------------------------

void SavedValues::assign(const LoomValue* values, size_t n) {
  values_.assign(values, values + n);
  for (auto& v : values_) {
    if (v.kind != LOOM_VALUE_INT_LIST && v.kind != LOOM_VALUE_FLOAT_LIST && v.kind != LOOM_VALUE_STRING)
      continue;
    if (!owned_) owned_ = std::make_unique<Owned>();
    switch (v.kind) {
      case LOOM_VALUE_INT_LIST: {
        owned_->ints.emplace_back(v.u.ints.data, v.u.ints.data + v.u.ints.size);
        v.u.ints.data = owned_->ints.back().data();
        break;
      }
      case LOOM_VALUE_FLOAT_LIST: {
        owned_->floats.emplace_back(v.u.floats.data, v.u.floats.data + v.u.floats.size);
        v.u.floats.data = owned_->floats.back().data();
        break;
      }
      default: {
        owned_->strings.emplace_back(v.u.str.data, static_cast<size_t>(v.u.str.size));
        v.u.str.data = owned_->strings.back().data();
        break;
      }
    }
  }
  // The outer vectors may grow and move their elements: a moved
  // std::vector keeps its heap buffer, so the pointers stay valid (strings
  // sit in a deque, whose elements never move: short strings live inline).
}

// ---- FormulaNode -------------------------------------------------------------------

std::vector<Tensor> FormulaNode::apply(std::vector<Tensor>&& grads) {
  std::vector<Tensor> results(inputs_.size());
  bool any = false;
  for (const auto& g : grads) any = any || g.defined();
  if (!any) return results;  // nothing flows: every input gets nothing
  bool widen = false;  // only in_float formulas look at the dtypes
  if (formula_->in_float)
    for (const InputInfo& in : inputs_) widen = widen || loom::detail::is_reduced_float(in.dtype);
  BackwardContext ctx(*this, grads, results, widen);
  formula_->backward(ctx);
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].defined()) continue;
    if (!next_edges_[i].valid()) {
      results[i] = Tensor();
      continue;
    }
    const InputInfo& in = inputs_[i];
    results[i] = detail::reduce_to_input(std::move(results[i]), in.sizes, in.dtype, in.device);
  }
  return results;
}

void FormulaNode::release_variables() {
  for (auto& s : saved_inputs_) s.release();
  for (auto& s : saved_outputs_) s.release();
}

// ---- BackwardContext ---------------------------------------------------------------

Tensor BackwardContext::widened(Tensor t) const {
  if (widen_ && t.defined() && loom::detail::is_reduced_float(t.dtype()))
    return t.to(DType::Float32);
  return t;
}

Tensor BackwardContext::grad(size_t o) const {
  if (o < grads_.size() && grads_[o].defined()) return widened(grads_[o]);
  const OutputMeta& m = node_.input_meta(o);
  return widened(loom::zeros(m.sizes, m.dtype, m.device));
}

Tensor BackwardContext::input(size_t i) const {
  LOOM_CHECK(i < node_.saved_inputs_.size() && node_.saved_inputs_[i].defined(), node_.name(),
             ": input ", i, " was not saved for backward (add it to the formula's inputs())");
  return widened(node_.saved_inputs_[i].unpack(&node_, "input", i));
}

bool BackwardContext::has_input(size_t i) const {
  return i < node_.saved_inputs_.size() && node_.saved_inputs_[i].defined();
}

Tensor BackwardContext::output(size_t o) const {
  LOOM_CHECK(o < node_.saved_outputs_.size() && node_.saved_outputs_[o].defined(), node_.name(),
             ": output ", o, " was not saved for backward (add it to the formula's outputs())");
  return widened(node_.saved_outputs_[o].unpack(&node_, "output", o));
}

bool BackwardContext::needs_grad(size_t i) const {
  return i < node_.next_edges_.size() && node_.next_edges_[i].valid();
}
size_t BackwardContext::num_inputs() const { return node_.inputs_.size(); }
IntArrayRef BackwardContext::input_sizes(size_t i) const { return node_.inputs_[i].sizes; }
DType BackwardContext::input_dtype(size_t i) const { return node_.inputs_[i].dtype; }
Device BackwardContext::device() const { return node_.input_meta(0).device; }
IntArrayRef BackwardContext::output_sizes(size_t o) const { return node_.input_meta(o).sizes; }

const LoomValue& BackwardContext::value(size_t i) const {
  LOOM_CHECK(i < node_.values_.size(), node_.name(), ": no non-tensor argument ", i);
  return node_.values_[i];
}
Scalar BackwardContext::scalar(size_t i) const { return loom::detail::scalar_from_value(value(i)); }
int64_t BackwardContext::int_arg(size_t i) const { return value(i).u.i; }
double BackwardContext::float_arg(size_t i) const {
  const LoomValue& v = value(i);
  return v.kind == LOOM_VALUE_FLOAT ? v.u.f : static_cast<double>(v.u.i);
}
bool BackwardContext::bool_arg(size_t i) const { return value(i).u.i != 0; }
IntArrayRef BackwardContext::int_list(size_t i) const {
  const LoomValue& v = value(i);
  if (v.kind != LOOM_VALUE_INT_LIST) return {};
  return {v.u.ints.data, static_cast<size_t>(v.u.ints.size)};
}
std::string_view BackwardContext::str(size_t i) const {
  const LoomValue& v = value(i);
  if (v.kind != LOOM_VALUE_STRING) return {};
  return {v.u.str.data, static_cast<size_t>(v.u.str.size)};
}

void BackwardContext::set(size_t i, Tensor grad) {
  LOOM_CHECK(i < results_.size(), node_.name(), ": formula set a gradient for input ", i,
             " but the op has ", results_.size(), " tensor inputs");
  results_[i] = std::move(grad);
}

namespace detail {
bool register_formula(const OpDef& op, Formula formula) {
  op.set_formula(new Formula(formula));  // lives as long as the op
  return true;
}

bool register_formula_name(const OpDef& op, NameFn name_of) {
  LOOM_CHECK(op.formula(), op.name(), ": LOOM_DERIVATIVE_NAME before the op's LOOM_DERIVATIVE");
  const_cast<Formula*>(op.formula())->name_of = name_of;
  return true;
}
bool register_formula_resolved_values(const OpDef& op) {
  LOOM_CHECK(op.formula(), op.name(), ": LOOM_DERIVATIVE_SAVES_RESOLVED_VALUES before the op's LOOM_DERIVATIVE");
  const_cast<Formula*>(op.formula())->saves_resolved_values = true;
  return true;
}
}  // namespace detail

}  // namespace loom::autograd
