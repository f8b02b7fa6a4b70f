// ops_indexing.cpp — the gather/scatter family: index_select, gather,
// scatter (src and value), scatter_add, index_add, masked_fill.
//
// Device kernels exist for the gather-like ops (gather, index_select) and the
// in-place scatter-like ops (scatter_.src, scatter_add_, index_add_,
// masked_fill_.Scalar). Every out-of-place form is a composite (a fresh copy
// of self, then the in-place op), so a backend implements four kernels and
// gets the rest. What each kernel sees: docs/kernel_conventions.md, "Indexing".
#include "autograd/formula.h"
#include "core_op.h"
#include "ops_indexing_util.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <algorithm>

namespace loom {
namespace {

// ---- gather / index_select --------------------------------------------------------

// gather(self, dim, index): index int64 with self's ndim, no larger than self
// off `dim`; the output has index's shape.
void prepare_gather(OpCall& call) {
  const Tensor& self = call.arg(0);
  const Tensor& index = call.arg(1);
  const char* op = "gather";
  detail::check_index_dtype(op, index, false);
  const int64_t dim = wrap_dim(op, call.values[0].u.i, self.dim());
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  LOOM_CHECK(std::max<int64_t>(index.dim(), 1) == nd, op,
             ": index must have the same number of dimensions as self (", nd, "), got ", index.dim());
  for (int64_t d = 0; d < self.dim() && index.dim() > 0; ++d)
    LOOM_CHECK(d == dim || index.sizes()[d] <= self.sizes()[d], op, ": index ", shape_str(index.sizes()),
               " must be no larger than self ", shape_str(self.sizes()), " apart from dimension ", dim,
               " (size ", index.sizes()[d], " vs ", self.sizes()[d], " at dimension ", d, ")");
  call.values[0].u.i = dim;
  call.inputs.resize(2);
  call.inputs[0].tensor = self.impl();
  call.inputs[1].tensor = index.impl();
  detail::view_as_1d_if_scalar(call, 0);
  detail::view_as_1d_if_scalar(call, 1);
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = self.dtype();
  plan.sizes = DimVector(index.sizes());
  if (index.dim() == 0) {
    const int64_t one = 1;
    plan.kernel_view = call.make_view(IntArrayRef(&one, 1), IntArrayRef(&one, 1));
  }
}

// index_select(self, dim, index): the kernel is gather's, with index read
// through a view of the output's shape (stride 0 off `dim`).
void prepare_index_select(OpCall& call) {
  const Tensor& self = call.arg(0);
  const Tensor& index = call.arg(1);
  const char* op = "index_select";
  detail::check_index_dtype(op, index, true);
  LOOM_CHECK(index.dim() <= 1, op, ": index must be 0-d or 1-D, got ", index.dim(), " dimensions");
  const int64_t dim = wrap_dim(op, call.values[0].u.i, self.dim());
  const int64_t n = index.numel();
  LOOM_CHECK(self.dim() > 0 || n == 1, op, ": indexing a 0-d tensor takes exactly one index, got ", n);
  call.values[0].u.i = dim;
  call.inputs.resize(2);
  call.inputs[0].tensor = self.impl();
  detail::view_as_1d_if_scalar(call, 0);
  DimVector ksizes = self.dim() == 0 ? DimVector{1} : DimVector(self.sizes());
  ksizes[static_cast<size_t>(dim)] = n;
  call.inputs[1] = detail::index_along(call, index, ksizes, dim);
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = self.dtype();
  plan.sizes = self.dim() == 0 ? DimVector() : ksizes;
  if (self.dim() == 0) plan.kernel_view = call.make_view(ksizes, DimVector{1});
}

// ---- scatter_ / scatter_add_ ----------------------------------------------------------

// The op's name without its overload ("scatter_.src" -> "scatter_").
std::string_view base_name(const OpCall& call) {
  std::string_view n = call.op->name();
  return n.substr(0, n.find('.'));
}

// scatter(self, dim, index, src) and scatter_add: index int64 with self's
// ndim, no larger than src anywhere and than self off `dim`; src (absent for
// the value form) in self's dtype. Returns dim wrapped.
int64_t check_scatter_args(std::string_view op, const Tensor& self, int64_t raw_dim, const Tensor& index,
                           const Tensor* src) {
  detail::check_index_dtype(op, index, false);
  if (src)
    LOOM_CHECK(src->dtype() == self.dtype(), op, ": expected src to have self's dtype ", name(self.dtype()),
               ", got ", name(src->dtype()));
  const int64_t dim = wrap_dim(op, raw_dim, self.dim());
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  LOOM_CHECK(std::max<int64_t>(index.dim(), 1) == nd, op,
             ": index must have the same number of dimensions as self (", nd, "), got ", index.dim());
  if (src)
    LOOM_CHECK(std::max<int64_t>(src->dim(), 1) == nd, op,
               ": src must have the same number of dimensions as self (", nd, "), got ", src->dim());
  for (int64_t d = 0; d < index.dim(); ++d) {
    LOOM_CHECK(!src || src->dim() == 0 || index.sizes()[d] <= src->sizes()[d], op, ": index ",
               shape_str(index.sizes()), " must be no larger than src ", shape_str(src->sizes()),
               " (at dimension ", d, ")");
    LOOM_CHECK(d == dim || self.dim() == 0 || index.sizes()[d] <= self.sizes()[d], op, ": index ",
               shape_str(index.sizes()), " must be no larger than self ", shape_str(self.sizes()),
               " apart from dimension ", dim, " (at dimension ", d, ")");
  }
  return dim;
}

// index_add(self, dim, index, source): index 0-d/1-D int64 or int32, source
// shaped like self with index.numel() along `dim`, in self's dtype.
int64_t check_index_add_args(std::string_view op, const Tensor& self, int64_t raw_dim, const Tensor& index,
                             const Tensor& source) {
  detail::check_index_dtype(op, index, true);
  LOOM_CHECK(index.dim() <= 1, op, ": index must be 0-d or 1-D, got ", index.dim(), " dimensions");
  LOOM_CHECK(source.dtype() == self.dtype(), op, ": expected source to have self's dtype ",
             name(self.dtype()), ", got ", name(source.dtype()));
  const int64_t dim = wrap_dim(op, raw_dim, self.dim());
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  LOOM_CHECK(std::max<int64_t>(source.dim(), 1) == nd, op,
             ": source must have the same number of dimensions as self (", nd, "), got ", source.dim());
  const int64_t along = source.dim() == 0 ? 1 : source.sizes()[dim];
  LOOM_CHECK(along == index.numel(), op, ": source has size ", along, " at dimension ", dim, " but index has ",
             index.numel(), " elements");
  for (int64_t d = 0; d < self.dim(); ++d)
    LOOM_CHECK(d == dim || self.sizes()[d] == source.sizes()[d], op, ": source ", shape_str(source.sizes()),
               " must match self ", shape_str(self.sizes()), " apart from dimension ", dim);
  return dim;
}

// scatter_.src / scatter_add_: the kernel reads src through a view of index's shape.
void prepare_scatter_inplace(OpCall& call) {
  Tensor& self = const_cast<Tensor&>(call.arg(0));
  const Tensor& index = call.arg(1);
  const Tensor& src = call.arg(2);
  call.values[0].u.i = check_scatter_args(base_name(call), self, call.values[0].u.i, index, &src);
  call.inputs.resize(3);
  call.inputs[0].tensor = self.impl();
  call.inputs[1].tensor = index.impl();
  call.inputs[2].tensor = src.impl();
  detail::view_as_1d_if_scalar(call, 0);
  detail::view_as_1d_if_scalar(call, 1);
  const DimVector isizes = index.dim() == 0 ? DimVector{1} : DimVector(index.sizes());
  const DimVector sstrides = src.dim() == 0 ? DimVector{0} : DimVector(src.strides());
  call.inputs[2].view = call.make_view(isizes, sstrides);
  detail::self_output(call, self);
}

// index_add_: the kernel reads index through a view of source's shape.
void prepare_index_add_inplace(OpCall& call) {
  Tensor& self = const_cast<Tensor&>(call.arg(0));
  const Tensor& index = call.arg(1);
  const Tensor& source = call.arg(2);
  const int64_t dim = check_index_add_args("index_add_", self, call.values[0].u.i, index, source);
  call.values[0].u.i = dim;
  call.inputs.resize(3);
  call.inputs[0].tensor = self.impl();
  call.inputs[1] = detail::index_along(call, index, source.dim() == 0 ? DimVector{1} : DimVector(source.sizes()), dim);
  call.inputs[2].tensor = source.impl();
  detail::view_as_1d_if_scalar(call, 0);
  detail::view_as_1d_if_scalar(call, 2);
  detail::self_output(call, self);
}

// masked_fill_(self, mask, value): bool mask broadcast to self's shape.
void prepare_masked_fill_inplace(OpCall& call) {
  const char* op = "masked_fill_";
  Tensor& self = const_cast<Tensor&>(call.arg(0));
  const Tensor& mask = call.arg(1);
  LOOM_CHECK(mask.dtype() == DType::Bool, op, ": expected mask to have dtype bool, got ", name(mask.dtype()));
  const DimVector b = broadcast_shapes(op, self.sizes(), mask.sizes());
  LOOM_CHECK(IntArrayRef(b) == self.sizes(), op, ": mask ", shape_str(mask.sizes()),
             " does not broadcast to self's shape ", shape_str(self.sizes()));
  call.inputs.resize(2);
  call.inputs[0].tensor = self.impl();
  set_input(call, 1, DType::Bool, self.sizes());
  detail::view_as_1d_if_scalar(call, 0);
  detail::view_as_1d_if_scalar(call, 1);
  detail::self_output(call, self);
}

// ---- out-of-place forms: a fresh copy of self, then the in-place op -------------------

// Output plan of an out-of-place form shaped like self (or like `shape`).
void plan_like_self(OpCall& call) {
  auto& plan = call.outputs.emplace_back();
  plan.dtype = call.arg(0).dtype();
  plan.sizes = DimVector(call.arg(0).sizes());
  call.compute_dtype = plan.dtype;
}
void prepare_scatter(OpCall& call) {  // scatter.src, scatter.value, scatter_add
  const bool has_src = call.args.size() > 2;
  check_scatter_args(base_name(call), call.arg(0), call.values[0].u.i, call.arg(1), has_src ? &call.arg(2) : nullptr);
  plan_like_self(call);
}
void prepare_index_add(OpCall& call) {
  check_index_add_args("index_add", call.arg(0), call.values[0].u.i, call.arg(1), call.arg(2));
  plan_like_self(call);
}
void prepare_masked_fill(OpCall& call) {
  LOOM_CHECK(call.arg(1).dtype() == DType::Bool, "masked_fill: expected mask to have dtype bool, got ",
             name(call.arg(1).dtype()));
  plan_like_self(call);
  call.outputs[0].sizes = broadcast_shapes("masked_fill", call.arg(0).sizes(), call.arg(1).sizes());
}

Tensor fresh_copy(const OpCall& call) {
  Tensor out = detail::empty_contiguous(call.arg(0).device(), call.outputs[0].dtype, call.outputs[0].sizes);
  out.copy_(call.arg(0));
  return out;
}
void scatter_src_composite(OpCall& call) {
  Tensor out = fresh_copy(call);
  call.outputs[0].result = scatter_(out, call.values[0].u.i, call.arg(1), call.arg(2));
}
void scatter_value_composite(OpCall& call) {
  Tensor out = fresh_copy(call);
  call.outputs[0].result = scatter_(out, call.values[0].u.i, call.arg(1), detail::scalar_from_value(call.values[1]));
}
void scatter_add_composite(OpCall& call) {
  Tensor out = fresh_copy(call);
  call.outputs[0].result = scatter_add_(out, call.values[0].u.i, call.arg(1), call.arg(2));
}
void index_add_composite(OpCall& call) {
  Tensor out = fresh_copy(call);
  call.outputs[0].result =
      index_add_(out, call.values[0].u.i, call.arg(1), call.arg(2), detail::scalar_from_value(call.values[1]));
}
void masked_fill_composite(OpCall& call) {
  Tensor out = fresh_copy(call);
  call.outputs[0].result = masked_fill_(out, call.arg(1), detail::scalar_from_value(call.values[0]));
}

// scatter_(self, dim, index, value): scatter_.src of a 0-d src in self's
// dtype, expanded (stride 0) to index's shape. No kernel of its own.
void prepare_scatter_value_inplace(OpCall& call) {
  check_scatter_args("scatter_", call.arg(0), call.values[0].u.i, call.arg(1), nullptr);
  detail::self_output(call, const_cast<Tensor&>(call.arg(0)));
}
void scatter_value_inplace_composite(OpCall& call) {
  Tensor& self = const_cast<Tensor&>(call.arg(0));
  const Tensor& index = call.arg(1);
  Tensor src = full({}, detail::scalar_from_value(call.values[1]), self.dtype(), self.device());
  if (index.dim() > 0) src = src.expand(index.sizes());
  call.outputs[0].result = scatter_(self, call.values[0].u.i, index, src);
}

LOOM_CORE_OP(gather_op, "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
             prepare_gather, nullptr)
LOOM_CORE_OP(index_select_op, "index_select(Tensor self, int dim, Tensor index) -> Tensor", prepare_index_select,
             nullptr)
LOOM_CORE_OP(scatter_src_inplace_op,
             "scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
             prepare_scatter_inplace, nullptr)
LOOM_CORE_OP(scatter_value_inplace_op,
             "scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
             prepare_scatter_value_inplace, scatter_value_inplace_composite)
LOOM_CORE_OP(scatter_add_inplace_op,
             "scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
             prepare_scatter_inplace, nullptr)
LOOM_CORE_OP(index_add_inplace_op,
             "index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)",
             prepare_index_add_inplace, nullptr)
LOOM_CORE_OP(masked_fill_inplace_op, "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
             prepare_masked_fill_inplace, nullptr)
LOOM_CORE_OP(scatter_src_op, "scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
             prepare_scatter, scatter_src_composite)
LOOM_CORE_OP(scatter_value_op, "scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
             prepare_scatter, scatter_value_composite)
LOOM_CORE_OP(scatter_add_op, "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
             prepare_scatter, scatter_add_composite)
LOOM_CORE_OP(index_add_op,
             "index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
             prepare_index_add, index_add_composite)
LOOM_CORE_OP(masked_fill_op, "masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
             prepare_masked_fill, masked_fill_composite)

// ---- derivatives --------------------------------------------------------------------
// Indices never get a gradient. values[0] is dim in every schema here (as
// the caller gave it: the ops it is passed on to wrap it again).
using autograd::BackwardContext;
using autograd::inputs;
using autograd::none;

// The gradient of scatter's src (tensor argument 2): g gathered at index,
// which may be smaller than src in any dim; the rest of src was never read.
Tensor scattered_src_grad(const BackwardContext& c, const Tensor& g) {
  const Tensor picked = gather(g, c.int_arg(0), c.input(1));
  const IntArrayRef sizes = c.input_sizes(2);
  if (sizes.empty() || picked.sizes() == sizes) return picked;  // a 0-d src is summed by the node
  Tensor full = zeros(sizes, g.dtype(), g.device());
  Tensor corner = full;
  const Tensor v = picked.dim() == 0 ? picked.reshape({1}) : picked;
  for (int64_t d = 0; d < v.dim(); ++d) corner = corner.narrow(d, 0, v.size(d));
  corner.copy_(v);
  return full;
}

// gather / index_select: accumulated into zeros in place (no copy unless
// backward is itself recorded).
LOOM_DERIVATIVE(gather_op, "GatherBackward0", inputs(1), none(), [](BackwardContext& c) {
  const Tensor g = c.grad();
  Tensor r = zeros(c.input_sizes(0), g.dtype(), g.device());
  c.set(0, scatter_add_(r, c.int_arg(0), c.input(1), g));
})
LOOM_DERIVATIVE(index_select_op, "IndexSelectBackward0", inputs(1), none(), [](BackwardContext& c) {
  const Tensor g = c.grad();
  Tensor r = zeros(c.input_sizes(0), g.dtype(), g.device());
  c.set(0, index_add_(r, c.int_arg(0), c.input(1), g));
})
// scatter: the overwritten positions of self get nothing.
LOOM_DERIVATIVE(scatter_src_op, "ScatterBackward0", inputs(1), none(), [](BackwardContext& c) {
  if (c.needs_grad(0)) c.set(0, scatter(c.grad(), c.int_arg(0), c.input(1), 0.0));
  if (c.needs_grad(2)) c.set(2, scattered_src_grad(c, c.grad()));
})
LOOM_DERIVATIVE(scatter_value_op, "ScatterBackward1", inputs(1), none(), [](BackwardContext& c) {
  c.set(0, scatter(c.grad(), c.int_arg(0), c.input(1), 0.0));
})
LOOM_DERIVATIVE(scatter_add_op, "ScatterAddBackward0", inputs(1), none(), [](BackwardContext& c) {
  if (c.needs_grad(0)) c.set(0, c.grad());
  if (c.needs_grad(2)) c.set(2, scattered_src_grad(c, c.grad()));
})
// values[1] is alpha.
LOOM_DERIVATIVE(index_add_op, "IndexAddBackward0", inputs(1), none(), [](BackwardContext& c) {
  if (c.needs_grad(0)) c.set(0, c.grad());
  if (c.needs_grad(2)) {
    const Tensor g = index_select(c.grad(), c.int_arg(0), c.input(1));
    c.set(2, c.scalar(1).to_double() == 1.0 ? g : g * c.scalar(1));
  }
})
LOOM_DERIVATIVE(masked_fill_op, "MaskedFillBackward0", inputs(1), none(), [](BackwardContext& c) {
  c.set(0, where(c.input(1), 0.0, c.grad()));
})

LoomValue int_value(int64_t i) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT;
  v.u.i = i;
  return v;
}

// masked_fill's value tensor (PyTorch's masked_fill.Tensor) must be 0-d.
const Tensor& checked_value(const Tensor& value) {
  LOOM_CHECK(value.dim() == 0, "masked_fill: value must be a 0-d tensor, got ", value.dim(), " dimension(s)");
  return value;
}

}  // namespace

// ---- C++ API ---------------------------------------------------------------------------

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  return detail::run_op(index_select_op(), {&self, &index}, {int_value(dim)});
}
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  return detail::run_op(gather_op(), {&self, &index}, {int_value(dim), detail::bool_value(false)});
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return detail::run_op(scatter_src_op(), {&self, &index, &src}, {int_value(dim)});
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
  return detail::run_op(scatter_value_op(), {&self, &index}, {int_value(dim), value.abi()});
}
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  detail::run_op(scatter_src_inplace_op(), {&self, &index, &src}, {int_value(dim)});
  return self;
}
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
  detail::run_op(scatter_value_inplace_op(), {&self, &index}, {int_value(dim), value.abi()});
  return self;
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return detail::run_op(scatter_add_op(), {&self, &index, &src}, {int_value(dim)});
}
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  detail::run_op(scatter_add_inplace_op(), {&self, &index, &src}, {int_value(dim)});
  return self;
}
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) {
  return detail::run_op(index_add_op(), {&self, &index, &source}, {int_value(dim), alpha.abi()});
}
Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) {
  detail::run_op(index_add_inplace_op(), {&self, &index, &source}, {int_value(dim), alpha.abi()});
  return self;
}
Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value) {
  return detail::run_op(masked_fill_op(), {&self, &mask}, {value.abi()});
}
// A value that requires grad cannot go through a Scalar: where gives it the
// sum of the gradient over the filled positions.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  if (!value.requires_grad()) return masked_fill(self, mask, checked_value(value).item());
  return where(mask, checked_value(value).to(self.device(), self.dtype()), self);
}
Tensor& masked_fill_(Tensor& self, const Tensor& mask, Scalar value) {
  detail::run_op(masked_fill_inplace_op(), {&self, &mask}, {value.abi()});
  return self;
}
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value) {
  if (!value.requires_grad()) return masked_fill_(self, mask, checked_value(value).item());
  self.copy_(masked_fill(self, mask, value));
  return self;
}

}  // namespace loom
