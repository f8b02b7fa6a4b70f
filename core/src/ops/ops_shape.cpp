// ops_shape.cpp — copying ops of loom/ops/shape.h: cat (an op with a kernel
// and a composite), stack, repeat and tile (written with views, cat and
// copies, so they work on every device), flip, roll, tril/triu (ops with
// kernels). What each kernel sees is docs/kernel_conventions.md, "Shape".
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <algorithm>

namespace loom {
namespace {

Tensor borrow(const TensorImpl* impl) {
  return Tensor(detail::IntrusivePtr<TensorImpl>(const_cast<TensorImpl*>(impl)));
}

LoomValue int_value(int64_t i) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT;
  v.u.i = i;
  return v;
}

// PyTorch skips 1-D tensors of size 0 in cat whatever the other shapes are.
bool skipped_in_cat(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

// cat(Tensor[] tensors, int dim): args are the list's tensors (flattened),
// values[0] is TENSOR_LIST(n), values[1] the dim. The kernel sees only the
// tensors that are not skipped, cast to the result dtype; values[0] counts
// them and values[1] is the wrapped dim.
void prepare_cat(OpCall& call) {
  const size_t n = call.args.size();
  LOOM_CHECK(n > 0, "cat: expected a non-empty list of Tensors");
  DType out = call.arg(0).dtype();
  for (size_t i = 1; i < n; ++i) out = promote_types(out, call.arg(i).dtype());
  const Tensor* ref = nullptr;
  size_t ref_index = 0;
  for (size_t i = 0; i < n && !ref; ++i)
    if (!skipped_in_cat(call.arg(i))) {
      ref = call.args[i];
      ref_index = i;
    }
  call.inputs.clear();
  call.compute_dtype = out;
  auto& plan = call.outputs.emplace_back();
  plan.dtype = out;
  if (!ref) {  // every tensor skipped: an empty 1-D result
    plan.sizes = DimVector{0};
    call.values[0].u.i = 0;
    call.values[1] = int_value(0);
    return;
  }
  LOOM_CHECK(ref->dim() > 0, "cat: zero-dimensional tensor (at position ", ref_index,
             ") cannot be concatenated");
  const int64_t d = wrap_dim("cat", call.values[1].u.i, ref->dim());
  plan.sizes = DimVector(ref->sizes());
  plan.sizes[d] = 0;
  int64_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = call.arg(i);
    if (skipped_in_cat(t)) continue;
    LOOM_CHECK(t.dim() > 0, "cat: zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    LOOM_CHECK(t.dim() == ref->dim(), "cat: Tensors must have same number of dimensions: got ", ref->dim(),
               " and ", t.dim(), " (tensor ", i, " in the list)");
    for (int64_t k = 0; k < t.dim(); ++k)
      LOOM_CHECK(k == d || t.sizes()[k] == ref->sizes()[k], "cat: Sizes of tensors must match except in dimension ",
                 d, ". Expected size ", ref->sizes()[k], " but got size ", t.sizes()[k], " for tensor number ", i,
                 " in the list (at dimension ", k, ")");
    plan.sizes[d] += t.sizes()[d];
    const TensorImpl* impl = t.impl();
    if (t.dtype() != out) {
      call.temps.push_back(t.to(out));
      impl = call.temps.back().impl();
    }
    call.inputs.emplace_back().tensor = impl;
    ++kept;
  }
  call.values[0].u.i = kept;
  call.values[1] = int_value(d);
}

// Any device: one copy_ per input into its slice of the output.
void composite_cat(OpCall& call) {
  detail::allocate_outputs(call);
  Tensor& out = call.outputs[0].result;
  const int64_t d = call.values[1].u.i;
  int64_t at = 0;
  for (const Operand& o : call.inputs) {
    Tensor in = borrow(o.tensor);
    out.narrow(d, at, in.sizes()[d]).copy_(in);
    at += in.sizes()[d];
  }
}

// Output like self; input 0 is self in its own dtype and strides.
void prepare_like_self(OpCall& call) {
  const Tensor& self = call.arg(0);
  call.inputs.resize(1);
  call.inputs[0].tensor = self.impl();
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = self.dtype();
  plan.sizes = DimVector(self.sizes());
}

// flip(self, dims): values[0] becomes the flipped dims, sorted, unique, non-negative.
void prepare_flip(OpCall& call) {
  const Tensor& self = call.arg(0);
  const LoomValue& v = call.values[0];
  std::vector<bool> flipped(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  for (int64_t i = 0; i < v.u.ints.size; ++i) {
    const int64_t d = wrap_dim("flip", v.u.ints.data[i], self.dim());
    LOOM_CHECK(!flipped[d], "flip: dim ", d, " appears multiple times in the list of dims");
    flipped[d] = true;
  }
  call.list_storage.clear();
  for (int64_t d = 0; d < self.dim(); ++d)
    if (flipped[d]) call.list_storage.push_back(d);
  call.values[0] = detail::int_list_value(call.list_storage);
  prepare_like_self(call);
}

// roll(self, shifts, dims): values[0] becomes one shift per dim of the input
// the kernel sees, each in [0, size); values[1] an empty list. Without dims
// the kernel sees self flattened (a contiguous copy when needed).
void prepare_roll(OpCall& call) {
  const Tensor& self = call.arg(0);
  const LoomValue shifts = call.values[0], dims = call.values[1];
  prepare_like_self(call);
  if (dims.u.ints.size == 0) {
    LOOM_CHECK(shifts.u.ints.size == 1, "roll: shifts must have exactly one entry when dims is empty, got ",
               shifts.u.ints.size);
    call.temps.push_back(self.contiguous().view({-1}));
    call.inputs[0].tensor = call.temps.back().impl();
    const int64_t n = self.numel();
    call.outputs[0].kernel_view = call.make_view(IntArrayRef(&n, 1), IntArrayRef(contiguous_strides({n})));
    const int64_t s = n == 0 ? 0 : ((shifts.u.ints.data[0] % n) + n) % n;
    call.list_storage = {s};
  } else {
    LOOM_CHECK(shifts.u.ints.size == dims.u.ints.size, "roll: shifts and dimensions must align. shifts: ",
               shifts.u.ints.size, ", dims: ", dims.u.ints.size);
    call.list_storage.clear();
    call.list_storage.resize(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), 0);
    for (int64_t i = 0; i < dims.u.ints.size; ++i) {
      const int64_t d = wrap_dim("roll", dims.u.ints.data[i], self.dim());
      call.list_storage[d] += shifts.u.ints.data[i];  // a repeated dim rolls twice
    }
    if (self.dim() == 0) call.list_storage.clear();
    for (int64_t d = 0; d < self.dim(); ++d) {
      const int64_t n = self.sizes()[d];
      call.list_storage[d] = n == 0 ? 0 : ((call.list_storage[d] % n) + n) % n;
    }
  }
  call.values[0] = detail::int_list_value(call.list_storage);
  call.values[1] = detail::int_list_value({});
}

void check_matrix(const OpCall& call) {
  LOOM_CHECK(call.arg(0).dim() >= 2, call.op->name(), ": input tensor must have at least 2 dimensions, got ",
             call.arg(0).dim(), " (shape ", shape_str(call.arg(0).sizes()), ")");
}
void prepare_triangle(OpCall& call) {
  check_matrix(call);
  prepare_like_self(call);
}
void prepare_triangle_inplace(OpCall& call) {
  check_matrix(call);
  prepare_self_output(call);
}

LOOM_CORE_OP(cat_op, "cat(Tensor[] tensors, int dim=0) -> Tensor", prepare_cat, composite_cat)
LOOM_CORE_OP(flip_op, "flip(Tensor self, int[] dims) -> Tensor", prepare_flip, nullptr)
LOOM_CORE_OP(roll_op, "roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor", prepare_roll, nullptr)
LOOM_CORE_OP(tril_op, "tril(Tensor self, int diagonal=0) -> Tensor", prepare_triangle, nullptr)
LOOM_CORE_OP(triu_op, "triu(Tensor self, int diagonal=0) -> Tensor", prepare_triangle, nullptr)
LOOM_CORE_OP(tril_inplace_op, "tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)", prepare_triangle_inplace,
             nullptr)
LOOM_CORE_OP(triu_inplace_op, "triu_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)", prepare_triangle_inplace,
             nullptr)

// cat: each input's gradient is its slice of the output's (values[0] is the
// list, values[1] the dim); the empty 1-D inputs cat skips get none. One
// node, where the composite's copies into slices would make one each.
LOOM_DERIVATIVE(cat_op, "CatBackward0", autograd::none(), autograd::none(), [](autograd::BackwardContext& c) {
  auto skipped = [&](size_t i) { return c.input_sizes(i).size() == 1 && c.input_sizes(i)[0] == 0; };
  size_t ref = 0;
  while (ref < c.num_inputs() && skipped(ref)) ++ref;
  if (ref == c.num_inputs()) return;
  const int64_t dim = c.int_arg(1);
  const int64_t d = dim < 0 ? dim + static_cast<int64_t>(c.input_sizes(ref).size()) : dim;
  int64_t at = 0;
  for (size_t i = ref; i < c.num_inputs(); ++i) {
    if (skipped(i)) continue;
    const int64_t n = c.input_sizes(i)[d];
    if (c.needs_grad(i)) c.set(i, c.grad().narrow(d, at, n));
    at += n;
  }
})
LOOM_DERIVATIVE(flip_op, "FlipBackward0", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) { c.set(0, flip(c.grad(), c.int_list(0))); })
LOOM_DERIVATIVE(roll_op, "RollBackward0", autograd::none(), autograd::none(), [](autograd::BackwardContext& c) {
  DimVector back;
  for (int64_t s : c.int_list(0)) back.push_back(-s);
  c.set(0, roll(c.grad(), back, c.int_list(1)));
})
LOOM_DERIVATIVE(tril_op, "TrilBackward0", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) { c.set(0, tril(c.grad(), c.int_arg(0))); })
LOOM_DERIVATIVE(triu_op, "TriuBackward0", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) { c.set(0, triu(c.grad(), c.int_arg(0))); })

}  // namespace

// ---- C++ API ---------------------------------------------------------------------

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  OpCall call(cat_op());
  for (const Tensor& t : tensors) call.args.push_back(&t);
  LoomValue list{};
  list.kind = LOOM_VALUE_TENSOR_LIST;
  list.u.i = static_cast<int64_t>(tensors.size());
  call.values.push_back(list);
  call.values.push_back(int_value(dim));
  LOOM_CHECK(!tensors.empty(), "cat: expected a non-empty list of Tensors");
  dispatch(call);
  return std::move(call.outputs[0].result);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  LOOM_CHECK(!tensors.empty(), "stack: expects a non-empty TensorList");
  const int64_t nd = tensors[0].dim();
  LOOM_CHECK(dim >= -(nd + 1) && dim <= nd, "stack: dimension ", dim, " is out of range for a ", nd,
             "-d result of ", nd + 1, " dims (expected [", -(nd + 1), ", ", nd, "])");
  const int64_t d = dim < 0 ? dim + nd + 1 : dim;
  std::vector<Tensor> pieces;
  for (size_t i = 0; i < tensors.size(); ++i) {
    LOOM_CHECK(tensors[i].sizes() == tensors[0].sizes(), "stack: expects each tensor to be equal size, but got ",
               shape_str(tensors[0].sizes()), " at entry 0 and ", shape_str(tensors[i].sizes()), " at entry ", i);
    pieces.push_back(tensors[i].unsqueeze(d));
  }
  return cat(pieces, d);
}

Tensor repeat(const Tensor& a, IntArrayRef sizes) {
  LOOM_CHECK(static_cast<int64_t>(sizes.size()) >= a.dim(),
             "repeat: Number of dimensions of repeat dims (", sizes.size(),
             ") can not be smaller than number of dimensions of tensor (", a.dim(), ")");
  for (int64_t r : sizes)
    LOOM_CHECK(r >= 0, "repeat: repeats must be non-negative, got ", shape_str(sizes));
  // Read a (padded with leading size-1 dims) as [r0, s0, r1, s1, ...]: a
  // size-1 dim before each dim, expanded to the repeat count, then copy
  // once. An expand (not an as_strided with stride 0) so that backward sums
  // the copies' gradients.
  const size_t lead = sizes.size() - static_cast<size_t>(a.dim());
  DimVector padded, expanded, result;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t own = i < lead ? 1 : a.sizes()[i - lead];
    padded.push_back(1);
    padded.push_back(own);
    expanded.push_back(sizes[i]);
    expanded.push_back(own);
    result.push_back(sizes[i] * own);
  }
  if (shape_numel(result) == 0) return empty(result, a.dtype(), a.device());
  return a.reshape(padded).expand(expanded).contiguous().view(result);
}

Tensor tile(const Tensor& a, IntArrayRef dims) {
  DimVector sizes(dims);
  while (static_cast<int64_t>(sizes.size()) < a.dim()) sizes.insert(0, 1);
  return repeat(a, sizes);
}

Tensor flip(const Tensor& a, IntArrayRef dims) {
  return detail::run_op(flip_op(), {&a}, {detail::int_list_value(dims)});
}

Tensor roll(const Tensor& a, IntArrayRef shifts, IntArrayRef dims) {
  return detail::run_op(roll_op(), {&a}, {detail::int_list_value(shifts), detail::int_list_value(dims)});
}

Tensor tril(const Tensor& a, int64_t diagonal) { return detail::run_op(tril_op(), {&a}, {int_value(diagonal)}); }
Tensor triu(const Tensor& a, int64_t diagonal) { return detail::run_op(triu_op(), {&a}, {int_value(diagonal)}); }
Tensor& tril_(Tensor& a, int64_t diagonal) {
  detail::run_op(tril_inplace_op(), {&a}, {int_value(diagonal)});
  return a;
}
Tensor& triu_(Tensor& a, int64_t diagonal) {
  detail::run_op(triu_inplace_op(), {&a}, {int_value(diagonal)});
  return a;
}

}  // namespace loom
