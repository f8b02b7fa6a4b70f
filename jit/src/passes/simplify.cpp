// simplify.cpp — simplify (loom/jit/passes.h).
#include <loom/jit/passes.h>

#include "effects.h"

#include <loom/ops.h>

namespace loom::jit {
namespace {

bool same_type(const Value& a, const Value& b) {
  return a.dtype == b.dtype && a.sizes == b.sizes && a.device == b.device;
}

// A constant every element of which equals `x`.
bool constant_all(const Graph& g, const Value* v, double x) {
  if (!internal::is_constant(v)) return false;
  const Tensor& t = g.tensors().at(v->name);
  if (t.numel() == 0 || t.dtype() == DType::Bool) return false;
  return (t.to(DType::Float64).cpu() == x).all().item<bool>();
}

bool alpha_is_one(const Node& n) {
  const Attr* a = internal::attr_named(n, "alpha");
  return !a || (a->kind == Attr::Kind::Int && a->i == 1) || (a->kind == Attr::Kind::Float && a->f == 1.0);
}

// What `n`'s result equals without computing anything, or nullptr.
Value* identity_of(const Graph& g, const Node& n) {
  const std::string& op = n.op->name();
  if (n.outputs.size() != 1 || n.inputs.empty() || !n.inputs[0]) return nullptr;
  Value* x = n.inputs[0];
  const Value& out = *n.outputs[0];
  auto keeps = [&](Value* v) { return v && same_type(*v, out) ? v : nullptr; };
  if (op == "mul" || op == "div") {
    if (constant_all(g, n.inputs[1], 1)) return keeps(x);
    if (op == "mul" && constant_all(g, x, 1)) return keeps(n.inputs[1]);
  }
  if ((op == "add" || op == "sub") && alpha_is_one(n)) {
    if (constant_all(g, n.inputs[1], 0)) return keeps(x);
    if (op == "add" && constant_all(g, x, 0)) return keeps(n.inputs[1]);
  }
  if (op == "view" || op == "expand") return keeps(x);
  // contiguous is a copy unless x is already contiguous, which the IR knows
  // only for a fresh result (not a view, not an in-place write, not an
  // input: those may be strided, e.g. a transpose before .contiguous().view()).
  if (op == "contiguous") {
    const Node* p = x->producer;
    return p && !internal::returns_view(*p) && !internal::writes_in_place(*p) ? keeps(x) : nullptr;
  }
  // Two transposes of the same dims, t of t, a permute undoing one.
  const Node* p = x->producer;
  if (!p || p->inputs.empty() || !p->inputs[0]) return nullptr;
  const std::string& inner = p->op->name();
  if (op == "t" && inner == "t") return keeps(p->inputs[0]);
  if (op == "transpose.int" && inner == "transpose.int") {
    const int64_t nd = static_cast<int64_t>(x->sizes.size());
    auto wrap = [nd](int64_t d) { return d < 0 ? d + nd : d; };
    const int64_t a0 = wrap(n.attrs[0].i), a1 = wrap(n.attrs[1].i), b0 = wrap(p->attrs[0].i), b1 = wrap(p->attrs[1].i);
    if ((a0 == b0 && a1 == b1) || (a0 == b1 && a1 == b0)) return keeps(p->inputs[0]);
  }
  if (op == "permute" && inner == "permute") {
    const auto& outer_dims = n.attrs[0].ints;
    const auto& inner_dims = p->attrs[0].ints;
    const int64_t nd = static_cast<int64_t>(outer_dims.size());
    if (static_cast<int64_t>(inner_dims.size()) != nd) return nullptr;
    auto wrap = [nd](int64_t d) { return d < 0 ? d + nd : d; };
    for (int64_t i = 0; i < nd; ++i)
      if (wrap(inner_dims[static_cast<size_t>(wrap(outer_dims[static_cast<size_t>(i)]))]) != i) return nullptr;
    return keeps(p->inputs[0]);
  }
  return nullptr;
}

}  // namespace

size_t simplify(Graph& g) {
  const std::vector<bool> written = internal::written_values(g);
  size_t simplified = 0;
  for (const auto& np : g.nodes()) {
    const Node& n = *np;
    if (!internal::pure(n) || n.outputs.size() != 1 || written[n.outputs[0]->index]) continue;
    Value* same = identity_of(g, n);
    // The value it stands for must not be written either: the result was
    // fresh memory (or a view) the writes did not reach.
    if (!same || written[same->index]) continue;
    g.replace_uses(n.outputs[0], same);
    ++simplified;
  }
  if (simplified) eliminate_dead_code(g);
  return simplified;
}

}  // namespace loom::jit
