// dispatch_autograd.cpp — the autograd layer above the device kernels.
//
// dispatch() comes here only when grad mode is on and some tensor argument
// requires grad (core/src/runtime/dispatch.cpp); every other call pays one flag test
// per argument. Here an op
//   - with a Formula runs below autograd (grad mode off) and records a
//     FormulaNode;
//   - without one but with a composite runs the composite with autograd on,
//     so the ops it calls record themselves;
//   - with neither records a node whose backward is an error naming it.
// In-place ops without a formula of their own take their out-of-place
// partner's: where it does not need the value they overwrite they run in
// place (their own kernel) and self takes the partner's node, as PyTorch's
// do — so a result the node keeps (relu_'s, sigmoid_'s) must not be written
// again before backward; otherwise they run the partner (recorded) on a
// copy of the old value and copy the result in.
#include "nodes.h"

#include <loom/ops.h>

namespace loom {
namespace detail {
void prepare_call(OpCall& call);  // dispatch.cpp
}  // namespace detail

namespace autograd::detail {
namespace {

bool differentiable(DType t) { return is_floating_point(t); }

bool is_leaf_impl(const TensorImpl* t) {
  const AutogradMeta* m = t->autograd_meta();
  return !m || !m->grad_fn;
}

void run_below_autograd(OpCall& call) {
  NoGradGuard no_grad;
  dispatch(call);
}

// The FormulaNode for a call whose forward has run (edges taken before).
NodePtr make_formula_node(const OpCall& call, const Formula& f) {
  auto node = loom::detail::make_intrusive<FormulaNode>(f, *call.op);
  if (f.name_of) node->name_ = f.name_of(call);
  const size_t n = call.args.size();
  node->inputs_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Tensor* a = call.args[i];
    if (a && a->defined()) {
      node->next_edges_.push_back(gradient_edge(*a));
      node->inputs_[i] = {DimVector(a->sizes()), a->dtype(), a->device()};
    } else {
      node->next_edges_.push_back(Edge{});
    }
  }
  if (f.save_inputs) {
    node->saved_inputs_.resize(n);
    // kAllInputs also covers a tensor list's arguments past the mask's 32 bits.
    const bool all = f.save_inputs == kAllInputs;
    for (size_t i = 0; i < n; ++i) {
      const Tensor* a = call.args[i];
      const bool wanted = all || (i < 32 && (f.save_inputs >> i & 1u));
      if (wanted && a && a->defined()) node->saved_inputs_[i] = SavedVariable(*a, false);
    }
  }
  if (!call.values.empty()) node->values_.assign(call.values.data(), call.values.size());
  return node;
}

// Gives the call's outputs their history and saves those the formula needs.
void attach_outputs(OpCall& call, FormulaNode& node, const Formula& f) {
  const size_t n = call.outputs.size();
  for (size_t o = 0; o < n; ++o) {
    const Tensor& r = call.outputs[o].result;
    node.input_meta_.push_back(meta_of(r));
    if (differentiable(r.dtype())) set_history(r, {NodePtr(&node), static_cast<uint32_t>(o)});
  }
  if (f.save_outputs) {
    node.saved_outputs_.resize(n);
    for (size_t o = 0; o < n && o < 32; ++o)
      if (f.save_outputs >> o & 1u) node.saved_outputs_[o] = SavedVariable(call.outputs[o].result, true);
  }
}

void check_inplace_allowed(const OpCall& call, const Tensor& self) {
  // The tensor itself first: a leaf may also be a view (of a tensor that
  // does not require grad, e.g. arange(12.).reshape(3, 4).requires_grad_()).
  LOOM_CHECK(!(self.requires_grad() && is_leaf_impl(self.impl())), call.op->name(),
             ": a leaf tensor that requires grad is being used in an in-place operation. Do it "
             "under NoGradGuard (as optimizers do), or on a clone.");
  if (const TensorImpl* base = self.impl()->view_base())
    LOOM_CHECK(!(base->requires_grad() && is_leaf_impl(base)), call.op->name(),
               ": a view of a leaf tensor that requires grad is being used in an in-place "
               "operation. Do it under NoGradGuard, or on a clone.");
}

// The out-of-place op "name" of the in-place op "name_" (overloads keep
// their suffix: "scatter_.src" pairs with "scatter.src").
const OpDef& out_of_place_partner(const OpDef& op) {
  const std::string& n = op.name();
  const size_t dot = n.find('.');
  const std::string base = n.substr(0, dot);
  const OpDef* p = base.size() > 1 && base.back() == '_'
                       ? Dispatcher::instance().find(base.substr(0, base.size() - 1) +
                                                     (dot == std::string::npos ? "" : n.substr(dot)))
                       : nullptr;
  LOOM_CHECK(p, op.name(), ": in-place op has no derivative formula and no out-of-place form to "
                "differentiate; it cannot write into a tensor that requires grad");
  return *p;
}

// Whether an in-place op can run as itself (its own kernel, in place) with
// its out-of-place partner's formula attached to self afterwards, rather
// than as the partner out of place plus a copy into self. The formula must
// not keep self's old value (the kernel overwrites it) nor values the
// prepare resolves (dropout's seed); no other argument may share self's
// storage (the kernel would read what it already wrote, y[1:].add_(y[:-1]),
// and a kept argument would change under the formula); every tensor
// argument has self's floating dtype, so the partner's result would have
// self's dtype and shape (the in-place op's prepare checks the shape).
bool runs_in_place(const OpCall& call, const Formula* pf) {
  if (!pf || !pf->backward || pf->saves_resolved_values || (pf->save_inputs & 1u)) return false;
  const Tensor& self = call.arg(0);
  if (!is_floating_point(self.dtype())) return false;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor* a = call.args[i];
    if (!a || !a->defined()) continue;
    if (a->dtype() != self.dtype()) return false;
    if (i > 0 && a->storage().get() == self.storage().get()) return false;
  }
  return true;
}

void dispatch_inplace(OpCall& call) {
  const Tensor& self = call.arg(0);
  check_inplace_allowed(call, self);
  if (const Formula* f = call.op->formula()) {
    // An in-place op with its own formula (copy_, fill_): edges to the old
    // value are taken before it is overwritten.
    NodePtr node = f->backward ? make_formula_node(call, *f) : NodePtr();
    run_below_autograd(call);
    if (!node) {
      rebase_history(self, Edge{});
      return;
    }
    auto& fn = static_cast<FormulaNode&>(*node);
    fn.input_meta_.push_back(meta_of(self));
    rebase_history(self, {node, 0});
    return;
  }
  const OpDef& partner = out_of_place_partner(*call.op);
  const Formula* pf = partner.formula();
  if (runs_in_place(call, pf)) {
    // One pass in place (relu_ on an activation, a residual's add_): the
    // partner's node takes its edges from the arguments as they are now,
    // then the kernel writes self and self's history moves onto the node.
    OpCall pc(partner);
    for (const Tensor* a : call.args) pc.args.push_back(a);
    for (const LoomValue& v : call.values) pc.values.push_back(v);
    NodePtr node = make_formula_node(pc, *pf);
    run_below_autograd(call);
    auto& fn = static_cast<FormulaNode&>(*node);
    fn.input_meta_.push_back(meta_of(self));
    rebase_history(self, {node, 0});
    if (pf->save_outputs & 1u) {
      fn.saved_outputs_.resize(1);
      fn.saved_outputs_[0] = SavedVariable(self, true);  // after the kernel's version bump
    }
    return;
  }
  // Validate as the in-place op would (shape may not grow, dtype must hold
  // the result), then compute out of place with autograd.
  ::loom::detail::prepare_call(call);
  OpCall pc(partner);
  for (const Tensor* a : call.args) pc.args.push_back(a);
  for (const LoomValue& v : call.values) pc.values.push_back(v);
  pc.device = call.device;
  Tensor old_self;
  if (!pf || (pf->save_inputs & 1u)) {
    // The partner keeps `self` for backward, and we are about to overwrite it.
    if (self.requires_grad()) old_self = self.clone();
    else {
      NoGradGuard no_grad;
      old_self = self.clone();
    }
    pc.args[0] = &old_self;
  }
  dispatch(pc);
  const Tensor r = pc.outputs[0].result;
  {
    NoGradGuard no_grad;
    const_cast<Tensor&>(self).copy_(r);
  }
  rebase_history(self, r.requires_grad() ? gradient_edge(r) : Edge{});
  call.outputs.clear();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = self.dtype();
  plan.sizes = DimVector(self.sizes());
  plan.result = self;
}

// Composites and in-place partners dispatch again: one that reaches its own
// op (X's composite calls X_, whose out-of-place partner is X) would recurse
// until the stack ends. Counted on those paths only, off the formula path.
class RecursionGuard {
 public:
  explicit RecursionGuard(const OpCall& call) {
    if (++depth() < 256) return;
    --depth();  // no destructor runs for a throwing constructor
    throw Error(loom::detail::cat(call.op->name(),
                                  ": autograd recursed through composites 256 deep; the op (or one "
                                  "its composite calls) needs a derivative formula"));
  }
  ~RecursionGuard() { --depth(); }

 private:
  static int& depth() {
    thread_local int d = 0;
    return d;
  }
};

}  // namespace

void dispatch_with_grad(OpCall& call) {
  LOOM_CHECK(call.out_args.empty(), call.op->name(),
             ": out= arguments don't support automatic differentiation, but one of the arguments "
             "requires grad");
  if (call.op->schema().is_inplace()) {
    RecursionGuard guard(call);
    dispatch_inplace(call);
    return;
  }
  if (const Formula* f = call.op->formula()) {
    if (!f->backward) {  // not differentiable: outputs never require grad
      run_below_autograd(call);
      return;
    }
    NodePtr node = make_formula_node(call, *f);
    run_below_autograd(call);
    auto& formula_node = static_cast<FormulaNode&>(*node);
    if (f->saves_resolved_values && !call.values.empty())
      formula_node.values_.assign(call.values.data(), call.values.size());
    attach_outputs(call, formula_node, *f);
    return;
  }
  if (CompositeFn composite = call.op->composite()) {
    // Differentiate through the ops the composite calls.
    RecursionGuard guard(call);
    ::loom::detail::prepare_call(call);
    composite(call);
    return;
  }
  // Neither: the forward runs; backward through it says why it cannot.
  auto node = loom::detail::make_intrusive<NotImplementedNode>(call.op->name());
  for (const Tensor* a : call.args) node->next_edges_.push_back(a && a->defined() ? gradient_edge(*a) : Edge{});
  run_below_autograd(call);
  for (size_t o = 0; o < call.outputs.size(); ++o) {
    const Tensor& r = call.outputs[o].result;
    node->input_meta_.push_back(meta_of(r));
    if (differentiable(r.dtype())) set_history(r, {node, static_cast<uint32_t>(o)});
  }
}

}  // namespace autograd::detail
}  // namespace loom
