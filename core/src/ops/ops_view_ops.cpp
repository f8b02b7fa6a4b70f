// ops_view_ops.cpp — the view functions (and clone, contiguous) as catalog
// ops (view_ops.h): each
// op's prepare plans its output from the view itself, and its composite is
// the view function (which, inside the dispatch, no longer sees a capture
// and makes the view directly, autograd's view record included).
#include "core_op.h"
#include "view_ops.h"
#include "autograd/formula.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <optional>

namespace loom {
namespace {

IntArrayRef ints(const LoomValue& v) {
  return v.kind == LOOM_VALUE_INT ? IntArrayRef(&v.u.i, 1) : IntArrayRef(v.u.ints.data, static_cast<size_t>(v.u.ints.size));
}
std::optional<int64_t> opt_int(const LoomValue& v) {
  return v.kind == LOOM_VALUE_NONE ? std::nullopt : std::optional<int64_t>(v.u.i);
}

Tensor apply_view(const OpCall& c) { return c.arg(0).view(ints(c.values[0])); }
Tensor apply_permute(const OpCall& c) { return permute(c.arg(0), ints(c.values[0])); }
Tensor apply_transpose(const OpCall& c) { return c.arg(0).transpose(c.values[0].u.i, c.values[1].u.i); }
Tensor apply_t(const OpCall& c) { return c.arg(0).t(); }
Tensor apply_unsqueeze(const OpCall& c) { return c.arg(0).unsqueeze(c.values[0].u.i); }
Tensor apply_squeeze(const OpCall& c) { return c.arg(0).squeeze(c.values[0].u.i); }
Tensor apply_expand(const OpCall& c) { return c.arg(0).expand(ints(c.values[0])); }
Tensor apply_select(const OpCall& c) { return c.arg(0).select(c.values[0].u.i, c.values[1].u.i); }
Tensor apply_narrow(const OpCall& c) { return c.arg(0).narrow(c.values[0].u.i, c.values[1].u.i, c.values[2].u.i); }
Tensor apply_slice(const OpCall& c) {
  return slice(c.arg(0), c.values[0].u.i, opt_int(c.values[1]), opt_int(c.values[2]), c.values[3].u.i);
}
Tensor apply_as_strided(const OpCall& c) { return c.arg(0).as_strided(ints(c.values[0]), ints(c.values[1]), opt_int(c.values[2])); }
Tensor apply_detach(const OpCall& c) { return c.arg(0).detach(); }
Tensor apply_clone(const OpCall& c) { return c.arg(0).clone(); }
Tensor apply_to_copy(const OpCall& c) {
  Tensor out = c.arg(0);
  if (c.values[0].kind != LOOM_VALUE_NONE) out = out.to(static_cast<DType>(c.values[0].u.i));
  if (c.values[1].kind != LOOM_VALUE_NONE)
    out = out.to(Device(static_cast<int16_t>(c.values[1].u.device.type), static_cast<int16_t>(c.values[1].u.device.index)));
  // The op always copies (a capture records it only where to() makes a new tensor).
  return out.is_same(c.arg(0)) ? out.clone() : out;
}
Tensor apply_contiguous(const OpCall& c) { return c.arg(0).contiguous(); }

// The output is planned from the view itself (cheap: sizes and strides).
template <Tensor (*Apply)(const OpCall&)>
void prepare_view(OpCall& call) {
  const Schema& s = call.op->schema();
  LOOM_CHECK(call.args.size() == 1 && call.args[0] && call.args[0]->defined() &&
                 call.values.size() == s.args.size() - 1,
             call.op->name(), ": expected one tensor and ", s.args.size() - 1, " other argument(s) (", s.text, ")");
  const Tensor v = Apply(call);
  auto& plan = call.outputs.emplace_back();
  plan.dtype = v.dtype();
  plan.sizes = DimVector(v.sizes());
  call.compute_dtype = v.dtype();
}
template <Tensor (*Apply)(const OpCall&)>
void composite_view(OpCall& call) {
  call.outputs[0].result = Apply(call);
}

#define LOOM_VIEW_OP(ident, schema, apply) LOOM_CORE_OP(ident, schema, prepare_view<apply>, composite_view<apply>)
LOOM_VIEW_OP(view_op, "view(Tensor(a) self, int[] size) -> Tensor(a)", apply_view)
LOOM_VIEW_OP(permute_op, "permute(Tensor(a) self, int[] dims) -> Tensor(a)", apply_permute)
LOOM_VIEW_OP(transpose_op, "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", apply_transpose)
LOOM_VIEW_OP(t_op, "t(Tensor(a) self) -> Tensor(a)", apply_t)
LOOM_VIEW_OP(unsqueeze_op, "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", apply_unsqueeze)
LOOM_VIEW_OP(squeeze_op, "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", apply_squeeze)
LOOM_VIEW_OP(expand_op, "expand(Tensor(a) self, int[] size) -> Tensor(a)", apply_expand)
LOOM_VIEW_OP(select_op, "select.int(Tensor(a) self, int dim, int index) -> Tensor(a)", apply_select)
LOOM_VIEW_OP(narrow_op, "narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)", apply_narrow)
LOOM_VIEW_OP(slice_op, "slice.Tensor(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)",
             apply_slice)
LOOM_VIEW_OP(as_strided_op, "as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None) -> Tensor(a)",
             apply_as_strided)
LOOM_VIEW_OP(detach_op, "detach(Tensor(a) self) -> Tensor(a)", apply_detach)
// Not views, but eager code runs them as empty + copy_ (see view_ops.h);
// _to_copy is to(dtype) and to(device).
LOOM_VIEW_OP(clone_op, "clone(Tensor self) -> Tensor", apply_clone)
LOOM_VIEW_OP(contiguous_op, "contiguous(Tensor(a) self) -> Tensor(a)", apply_contiguous)
LOOM_VIEW_OP(to_copy_op, "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor", apply_to_copy)
#undef LOOM_VIEW_OP
// Gradients flow through the composites (the view functions record their
// own backward); detach's result never requires grad.
LOOM_NOT_DIFFERENTIABLE(detach_op)

}  // namespace

Tensor detail::run_as_op(const char* op, const Tensor& self, std::initializer_list<LoomValue> values) {
  OpCall call(Dispatcher::instance().op(op));
  call.args.push_back(&self);
  for (const LoomValue& v : values) call.values.push_back(v);
  dispatch(call);
  return std::move(call.outputs[0].result);
}

}  // namespace loom
