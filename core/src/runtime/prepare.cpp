// prepare.cpp — the shared rules ops use to prepare a call: broadcasting,
// PyTorch's result_type, casting inputs to the compute dtype.
#include <loom/error.h>
#include <loom/op_call.h>

#include <algorithm>

namespace loom {

DimVector broadcast_shapes(std::string_view op, IntArrayRef a, IntArrayRef b) {
  const size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    LOOM_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", shape_str(a), " and ",
               shape_str(b), " cannot be broadcast together (size ", da, " vs ", db,
               " at dimension ", i, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DimVector broadcast_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef shape) {
  DimVector out(shape.size(), 0);
  const size_t lead = shape.size() - sizes.size();
  for (size_t i = lead; i < shape.size(); ++i)
    out[i] = sizes[i - lead] == shape[i] ? strides[i - lead] : 0;
  return out;
}

namespace {
constexpr int kUndefined = -1;

int category(int t) {
  if (t == kUndefined) return -1;
  const auto d = static_cast<DType>(t);
  return d == DType::Bool ? 0 : is_floating_point(d) ? 2 : 1;
}

int promote(int a, int b) {
  if (a == kUndefined) return b;
  if (b == kUndefined) return a;
  return static_cast<int>(promote_types(static_cast<DType>(a), static_cast<DType>(b)));
}

// PyTorch's combine_categories: a lower-priority group only matters when it
// is of a higher category than the higher-priority group.
int combine(int higher, int lower) {
  if (higher == kUndefined) return lower;
  if (lower == kUndefined) return higher;
  if (category(higher) >= category(lower)) return higher;
  return promote(higher, lower);
}
}  // namespace

namespace {
template <class Range>
DType result_type_of(const Range& tensors, std::string_view op) {
  int dim = kUndefined, zero = kUndefined, wrapped = kUndefined;
  for (const Tensor* t : tensors) {
    if (!t || !t->defined()) continue;
    const int d = static_cast<int>(t->dtype());
    // A wrapped float is stored as float64 but votes as the default float
    // dtype (PyTorch's update_result_type_state): `i32 + 2.5` is float32.
    if (t->impl()->is_wrapped_number())
      wrapped = promote(wrapped, is_floating_point(t->dtype()) ? static_cast<int>(kDefaultFloat) : d);
    else if (t->dim() == 0) zero = promote(zero, d);
    else dim = promote(dim, d);
  }
  const int r = combine(dim, combine(zero, wrapped));
  LOOM_CHECK(r != kUndefined, op, ": no tensor arguments to infer a dtype from");
  return static_cast<DType>(r);
}
}  // namespace

DType result_type(const OpCall& call) { return result_type_of(call.args, call.op->name()); }
DType result_type(std::initializer_list<const Tensor*> tensors, std::string_view op) {
  return result_type_of(tensors, op);
}

DimVector broadcast_all(const OpCall& call) {
  DimVector shape;
  bool first = true;
  for (const Tensor* t : call.args) {
    if (!t || !t->defined()) continue;
    if (first) {
      shape = DimVector(t->sizes());
      first = false;
    } else if (!(t->sizes() == IntArrayRef(shape))) {
      shape = broadcast_shapes(call.op->name(), shape, t->sizes());
    }
  }
  return shape;
}

void inplace_via_out_of_place(OpCall& call) {
  const std::string& n = call.op->name();
  OpCall out(Dispatcher::instance().op(std::string_view(n).substr(0, n.size() - 1)));
  out.args = call.args;
  out.values = call.values;
  dispatch(out);
  Tensor self = call.arg(0);
  self.copy_(out.result());
  call.outputs[0].result = self;
}

int64_t wrap_dim(std::string_view op, int64_t dim, int64_t ndim) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  LOOM_CHECK(dim >= -n && dim < n, op, ": dimension ", dim, " is out of range for a ", ndim,
             "-d tensor (expected [", -n, ", ", n - 1, "])");
  return dim < 0 ? dim + n : dim;
}

void set_input(OpCall& call, size_t i, DType dtype, IntArrayRef shape) {
  if (call.inputs.size() <= i) call.inputs.resize(i + 1);
  const Tensor* t = call.args[i];
  Operand& o = call.inputs[i];
  if (!t || !t->defined()) {
    o.tensor = nullptr;
    return;
  }
  const TensorImpl* impl = t->impl();
  if (impl->dtype() != dtype) {
    call.temps.push_back(t->to(dtype));  // cast before broadcasting: fewer elements
    impl = call.temps.back().impl();
  }
  o.tensor = impl;
  const IntArrayRef own = impl->sizes();
  if (!(own == shape)) o.view = call.make_view(shape, broadcast_strides(own, impl->strides(), shape));
}

void prepare_elementwise(OpCall& call, DType compute, DType out) {
  auto& plan = call.outputs.emplace_back();
  plan.dtype = out;
  plan.sizes = broadcast_all(call);
  call.inputs.resize(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) set_input(call, i, compute, plan.sizes);
  call.compute_dtype = compute;
}

void prepare_self_output(OpCall& call) {
  const Tensor& self = call.arg(0);
  call.inputs.resize(1);
  call.inputs[0].tensor = self.impl();
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = self.dtype();
  plan.sizes = DimVector(self.sizes());
  plan.result = self;
}

void prepare_inplace(OpCall& call) {
  const Tensor& self = *call.args[0];
  const DType t = result_type(call);
  LOOM_CHECK(can_cast(t, self.dtype()),
             call.op->name(), ": result type ", name(t), " can't be cast to the output dtype ",
             name(self.dtype()));
  call.inputs.resize(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor* a = call.args[i];
    if (a && a->defined() && i > 0) {
      DimVector b = broadcast_shapes(call.op->name(), self.sizes(), a->sizes());
      LOOM_CHECK(std::equal(b.begin(), b.end(), self.sizes().begin(), self.sizes().end()),
                 call.op->name(), ": output with shape ", shape_str(self.sizes()),
                 " doesn't match the broadcast shape ", shape_str(b));
    }
    set_input(call, i, self.dtype(), self.sizes());
  }
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = self.dtype();
  plan.sizes = DimVector(self.sizes());
  plan.result = self;
}

}  // namespace loom
