// ops_reduce.cpp — reductions and scans: sum, mean, prod, amax, amin,
// max/min with indices, argmax, argmin, var, std, norm, logsumexp, all, any,
// cumsum, cumprod. One prepare drives every reduction; what each kernel sees
// is docs/kernel_conventions.md, "Reductions".
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <algorithm>
#include <cmath>

namespace loom {
namespace {

// How a reduction's dtypes work.
enum class OutRule {
  SumLike,    // dtype argument, else integers/bool -> int64
  FloatOnly,  // dtype argument (floating), else the input's, which must be floating
  Same,       // the input's dtype
  Index,      // int64 indices
  ToBool,     // bool result, input read in its own dtype
  FloatPromote,  // integers -> float32
};

struct ReduceSpec {
  OutRule rule;
  int keepdim_at;       // index of the keepdim value
  int dtype_at = -1;    // index of the ScalarType? value, or -1
  bool needs_elements;  // no identity: an empty reduction is an error
  bool with_indices = false;  // a second, int64 output
};

DType reduce_out_dtype(const OpCall& call, const ReduceSpec& s) {
  const DType in = call.arg(0).dtype();
  const bool has_dtype = s.dtype_at >= 0 && call.values[s.dtype_at].kind == LOOM_VALUE_DTYPE;
  const DType given = has_dtype ? static_cast<DType>(call.values[s.dtype_at].u.i) : in;
  switch (s.rule) {
    case OutRule::SumLike: return has_dtype ? given : is_integral(in, true) ? DType::Int64 : in;
    case OutRule::FloatOnly:
      LOOM_CHECK(is_floating_point(given), call.op->name(),
                 ": expected a floating point input (or a floating dtype argument), got ", name(given));
      return given;
    case OutRule::Same: return in;
    case OutRule::Index: return DType::Int64;
    case OutRule::ToBool: return DType::Bool;
    case OutRule::FloatPromote: return is_floating_point(in) ? in : kDefaultFloat;
  }
  return in;
}

// The reduced dims from values[0] (INT_LIST, INT or NONE; empty or NONE
// means all), validated and wrapped.
std::vector<bool> reduced_dims(const OpCall& call) {
  const int64_t nd = call.arg(0).dim();
  std::vector<bool> reduced(static_cast<size_t>(nd), false);
  const LoomValue& v = call.values[0];
  auto mark = [&](int64_t raw) {
    const int64_t d = wrap_dim(call.op->name(), raw, nd);
    if (nd == 0) return;  // dim 0 / -1 of a 0-d tensor reduces nothing
    LOOM_CHECK(!reduced[d], call.op->name(), ": dim ", d, " appears multiple times in the list of dims");
    reduced[d] = true;
  };
  if (v.kind == LOOM_VALUE_INT) {
    mark(v.u.i);
  } else if (v.kind == LOOM_VALUE_INT_LIST && v.u.ints.size > 0) {
    for (int64_t i = 0; i < v.u.ints.size; ++i) mark(v.u.ints.data[i]);
  } else {
    std::fill(reduced.begin(), reduced.end(), true);
  }
  return reduced;
}

void prepare_reduction(OpCall& call, const ReduceSpec& s) {
  const Tensor& self = call.arg(0);
  const DType out = reduce_out_dtype(call, s);
  const bool keepdim = call.values[s.keepdim_at].u.i != 0;
  const std::vector<bool> reduced = reduced_dims(call);
  if (s.needs_elements) {
    for (size_t d = 0; d < reduced.size(); ++d)
      LOOM_CHECK(!reduced[d] || self.sizes()[d] != 0, call.op->name(), ": expected reduction dim ", d,
                 " to have non-zero size (", shape_str(self.sizes()), ")");
    LOOM_CHECK(self.numel() != 0 || self.dim() != 0, call.op->name(), ": the input has no elements");
  }
  call.list_storage.clear();
  DimVector keep_sizes, result_sizes;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) call.list_storage.push_back(static_cast<int64_t>(d));
    keep_sizes.push_back(reduced[d] ? 1 : self.sizes()[d]);
    if (!reduced[d] || keepdim) result_sizes.push_back(keep_sizes.back());
  }
  call.values[0] = detail::int_list_value(call.list_storage);
  const DType compute = s.rule == OutRule::ToBool || s.rule == OutRule::Index ? self.dtype()
                        : s.rule == OutRule::Same ? self.dtype()
                                                  : out;
  call.inputs.resize(1);
  set_input(call, 0, compute, self.sizes());
  call.compute_dtype = compute;
  for (int k = 0; k < (s.with_indices ? 2 : 1); ++k) {
    auto& plan = call.outputs.emplace_back();
    plan.dtype = k == 0 ? out : DType::Int64;
    plan.sizes = result_sizes;
    if (!keepdim) plan.kernel_view = call.make_view(keep_sizes, contiguous_strides(keep_sizes));
  }
}

template <OutRule R, int KeepdimAt, int DTypeAt, bool NeedsElements, bool WithIndices = false>
void prepare_reduce(OpCall& call) {
  prepare_reduction(call, ReduceSpec{R, KeepdimAt, DTypeAt, NeedsElements, WithIndices});
}

// argmax/argmin: no dim means the index into the flattened input.
void prepare_arg_reduce(OpCall& call) {
  if (call.values[0].kind != LOOM_VALUE_NONE) {
    prepare_reduction(call, ReduceSpec{OutRule::Index, 1, -1, true});
    return;
  }
  const Tensor& self = call.arg(0);
  LOOM_CHECK(self.numel() > 0, call.op->name(), ": expected a non-empty input when dim is None");
  const bool keepdim = call.values[1].u.i != 0;
  call.temps.push_back(self.contiguous().view({-1}));
  call.inputs.resize(1);
  call.inputs[0].tensor = call.temps.back().impl();
  call.list_storage = {0};
  call.values[0] = detail::int_list_value(call.list_storage);
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = DType::Int64;
  plan.sizes = keepdim ? DimVector(static_cast<size_t>(self.dim()), 1) : DimVector();
  const int64_t one = 1;
  plan.kernel_view = call.make_view(IntArrayRef(&one, 1), IntArrayRef(&one, 1));
}

// var/std: correction None -> 1, always passed as FLOAT.
void prepare_var(OpCall& call) {
  LoomValue& c = call.values[1];
  if (c.kind == LOOM_VALUE_NONE) c = detail::float_value(1.0);
  else if (c.kind != LOOM_VALUE_FLOAT) c = detail::float_value(static_cast<double>(c.u.i));
  prepare_reduction(call, ReduceSpec{OutRule::FloatOnly, 2, -1, false});
}

// norm(self, p, dim, keepdim): the kernel gets dims first, then p as FLOAT.
void prepare_norm(OpCall& call) {
  LoomValue p = call.values[0];
  if (p.kind == LOOM_VALUE_NONE) p = detail::float_value(2.0);
  else if (p.kind != LOOM_VALUE_FLOAT) p = detail::float_value(static_cast<double>(p.u.i));
  call.values[0] = call.values[1];
  call.values[1] = p;
  prepare_reduction(call, ReduceSpec{OutRule::FloatOnly, 2, -1, false});
}

// cumsum/cumprod(self, dim, dtype): an inclusive scan, output shaped like self.
void prepare_scan(OpCall& call) {
  const Tensor& self = call.arg(0);
  const int64_t d = wrap_dim(call.op->name(), call.values[0].u.i, self.dim());
  call.values[0].u.i = self.dim() == 0 ? 0 : d;
  const DType out = call.values[1].kind == LOOM_VALUE_DTYPE ? static_cast<DType>(call.values[1].u.i)
                    : is_integral(self.dtype(), true)        ? DType::Int64
                                                             : self.dtype();
  call.inputs.resize(1);
  set_input(call, 0, out, self.sizes());
  call.compute_dtype = out;
  auto& plan = call.outputs.emplace_back();
  plan.dtype = out;
  plan.sizes = DimVector(self.sizes());
}

LOOM_CORE_OP(sum_op, "sum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
             (prepare_reduce<OutRule::SumLike, 1, 2, false>), nullptr)
LOOM_CORE_OP(mean_op, "mean(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
             (prepare_reduce<OutRule::FloatOnly, 1, 2, false>), nullptr)
// ---- derivatives ----------------------------------------------------------------
// A reduction's gradient, re-expanded over the dims it reduced (values[0] is
// dim, values[1] keepdim in every schema here).
Tensor expand_reduced(const autograd::BackwardContext& c) {
  const IntArrayRef in = c.input_sizes(0);
  const Tensor g = autograd::unsqueeze_reduced(c.grad(), c.int_list(0), static_cast<int64_t>(in.size()),
                                               c.bool_arg(1));
  return g.expand(in);
}
LOOM_DERIVATIVE(sum_op, "SumBackward1", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) { c.set(0, expand_reduced(c)); })
LOOM_DERIVATIVE(mean_op, "MeanBackward1", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const double n = static_cast<double>(shape_numel(c.input_sizes(0)));
                  const double m = static_cast<double>(shape_numel(c.output_sizes(0)));
                  c.set(0, expand_reduced(c) * (m / std::max(n, 1.0)));
                })

LOOM_CORE_OP(prod_op, "prod(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
             (prepare_reduce<OutRule::SumLike, 1, 2, false>), nullptr)
LOOM_CORE_OP(amax_op, "amax(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
             (prepare_reduce<OutRule::Same, 1, -1, true>), nullptr)
LOOM_CORE_OP(amin_op, "amin(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
             (prepare_reduce<OutRule::Same, 1, -1, true>), nullptr)
LOOM_CORE_OP(max_dim_op, "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
             (prepare_reduce<OutRule::Same, 1, -1, true, true>), nullptr)
LOOM_CORE_OP(min_dim_op, "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
             (prepare_reduce<OutRule::Same, 1, -1, true, true>), nullptr)
LOOM_CORE_OP(argmax_op, "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
             prepare_arg_reduce, nullptr)
LOOM_CORE_OP(argmin_op, "argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
             prepare_arg_reduce, nullptr)
LOOM_CORE_OP(var_op, "var(Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
             prepare_var, nullptr)
LOOM_CORE_OP(std_op, "std(Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
             prepare_var, nullptr)
LOOM_CORE_OP(norm_op, "norm(Tensor self, Scalar? p=2, int[]? dim=None, bool keepdim=False) -> Tensor",
             prepare_norm, nullptr)
LOOM_CORE_OP(logsumexp_op, "logsumexp(Tensor self, int[] dim, bool keepdim=False) -> Tensor",
             (prepare_reduce<OutRule::FloatPromote, 1, -1, false>), nullptr)
LOOM_CORE_OP(all_op, "all(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
             (prepare_reduce<OutRule::ToBool, 1, -1, false>), nullptr)
LOOM_CORE_OP(any_op, "any(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
             (prepare_reduce<OutRule::ToBool, 1, -1, false>), nullptr)
LOOM_CORE_OP(cumsum_op, "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", prepare_scan,
             nullptr)
LOOM_CORE_OP(cumprod_op, "cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", prepare_scan,
             nullptr)

LoomValue dims_value(std::optional<IntArrayRef> dim) {
  return dim ? detail::int_list_value(*dim) : detail::none_value();
}
LoomValue int_value(int64_t i) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT;
  v.u.i = i;
  return v;
}

}  // namespace

// ---- C++ API ---------------------------------------------------------------------

Tensor sum(const Tensor& a, std::optional<DType> dtype) {
  return detail::run_op(sum_op(), {&a}, {detail::none_value(), detail::bool_value(false), detail::dtype_value(dtype)});
}
Tensor sum(const Tensor& a, IntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  return detail::run_op(sum_op(), {&a},
                        {detail::int_list_value(dim), detail::bool_value(keepdim), detail::dtype_value(dtype)});
}
Tensor& sum_out(Tensor& out, const Tensor& a, IntArrayRef dim, bool keepdim,
                std::optional<DType> dtype) {
  return detail::run_op_out(out, sum_op(), {&a},
                            {detail::int_list_value(dim), detail::bool_value(keepdim), detail::dtype_value(dtype)});
}
Tensor& mean_out(Tensor& out, const Tensor& a, IntArrayRef dim, bool keepdim,
                 std::optional<DType> dtype) {
  return detail::run_op_out(out, mean_op(), {&a},
                            {detail::int_list_value(dim), detail::bool_value(keepdim), detail::dtype_value(dtype)});
}
Tensor Tensor::sum() const { return loom::sum(*this); }
Tensor Tensor::sum(IntArrayRef dim, bool keepdim) const { return loom::sum(*this, dim, keepdim); }

Tensor mean(const Tensor& a, std::optional<IntArrayRef> dim, bool keepdim, std::optional<DType> dtype) {
  return detail::run_op(mean_op(), {&a}, {dims_value(dim), detail::bool_value(keepdim), detail::dtype_value(dtype)});
}
Tensor prod(const Tensor& a, std::optional<IntArrayRef> dim, bool keepdim, std::optional<DType> dtype) {
  return detail::run_op(prod_op(), {&a}, {dims_value(dim), detail::bool_value(keepdim), detail::dtype_value(dtype)});
}
Tensor amax(const Tensor& a, IntArrayRef dim, bool keepdim) {
  return detail::run_op(amax_op(), {&a}, {detail::int_list_value(dim), detail::bool_value(keepdim)});
}
Tensor amin(const Tensor& a, IntArrayRef dim, bool keepdim) {
  return detail::run_op(amin_op(), {&a}, {detail::int_list_value(dim), detail::bool_value(keepdim)});
}
Tensor max(const Tensor& a) { return amax(a, {}, false); }
Tensor min(const Tensor& a) { return amin(a, {}, false); }

namespace {
std::pair<Tensor, Tensor> run_two(const OpDef& op, const Tensor& a, int64_t dim, bool keepdim) {
  OpCall call(op);
  call.args.push_back(&a);
  call.values.push_back(int_value(dim));
  call.values.push_back(detail::bool_value(keepdim));
  dispatch(call);
  return {std::move(call.outputs[0].result), std::move(call.outputs[1].result)};
}
}  // namespace

std::pair<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim) {
  return run_two(max_dim_op(), a, dim, keepdim);
}
std::pair<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim) {
  return run_two(min_dim_op(), a, dim, keepdim);
}
Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  return detail::run_op(argmax_op(), {&a}, {dim ? int_value(*dim) : detail::none_value(), detail::bool_value(keepdim)});
}
Tensor argmin(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  return detail::run_op(argmin_op(), {&a}, {dim ? int_value(*dim) : detail::none_value(), detail::bool_value(keepdim)});
}
Tensor var(const Tensor& a, std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim) {
  return detail::run_op(var_op(), {&a},
                        {dims_value(dim), correction ? correction->abi() : detail::none_value(), detail::bool_value(keepdim)});
}
Tensor std(const Tensor& a, std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim) {
  return detail::run_op(std_op(), {&a},
                        {dims_value(dim), correction ? correction->abi() : detail::none_value(), detail::bool_value(keepdim)});
}
Tensor norm(const Tensor& a, std::optional<Scalar> p, std::optional<IntArrayRef> dim, bool keepdim) {
  return detail::run_op(norm_op(), {&a},
                        {p ? p->abi() : detail::none_value(), dims_value(dim), detail::bool_value(keepdim)});
}
Tensor logsumexp(const Tensor& a, IntArrayRef dim, bool keepdim) {
  return detail::run_op(logsumexp_op(), {&a}, {detail::int_list_value(dim), detail::bool_value(keepdim)});
}
Tensor all(const Tensor& a, std::optional<IntArrayRef> dim, bool keepdim) {
  return detail::run_op(all_op(), {&a}, {dims_value(dim), detail::bool_value(keepdim)});
}
Tensor any(const Tensor& a, std::optional<IntArrayRef> dim, bool keepdim) {
  return detail::run_op(any_op(), {&a}, {dims_value(dim), detail::bool_value(keepdim)});
}
Tensor cumsum(const Tensor& a, int64_t dim, std::optional<DType> dtype) {
  return detail::run_op(cumsum_op(), {&a}, {int_value(dim), detail::dtype_value(dtype)});
}
Tensor& cumsum_out(Tensor& out, const Tensor& a, int64_t dim, std::optional<DType> dtype) {
  return detail::run_op_out(out, cumsum_op(), {&a}, {int_value(dim), detail::dtype_value(dtype)});
}
Tensor cumprod(const Tensor& a, int64_t dim, std::optional<DType> dtype) {
  return detail::run_op(cumprod_op(), {&a}, {int_value(dim), detail::dtype_value(dtype)});
}

}  // namespace loom
