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
// `t`, shaped like the reduction's result, with its reduced dims back as
// size 1 so it broadcasts against the input (values[at] is the dims,
// values[at + 1] keepdim).
Tensor unreduce(const autograd::BackwardContext& c, const Tensor& t, size_t at = 0) {
  return autograd::unsqueeze_reduced(t, c.int_list(at), static_cast<int64_t>(c.input_sizes(0).size()),
                                     c.bool_arg(at + 1));
}
// A reduction's gradient, re-expanded over the dims it reduced.
Tensor expand_reduced(const autograd::BackwardContext& c) { return unreduce(c, c.grad()).expand(c.input_sizes(0)); }
LOOM_DERIVATIVE(sum_op, "SumBackward1", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) { c.set(0, expand_reduced(c)); })
// PyTorch's overloads: sum() / sum(dim) (likewise mean, prod).
bool reduces_all(const OpCall& call) {
  const LoomValue& dim = call.values[0];
  return dim.kind == LOOM_VALUE_NONE || (dim.kind == LOOM_VALUE_INT_LIST && dim.u.ints.size == 0);
}
LOOM_DERIVATIVE_NAME(sum_op, [](const OpCall& call) { return reduces_all(call) ? "SumBackward0" : "SumBackward1"; })
LOOM_DERIVATIVE(mean_op, "MeanBackward1", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const double n = static_cast<double>(shape_numel(c.input_sizes(0)));
                  const double m = static_cast<double>(shape_numel(c.output_sizes(0)));
                  c.set(0, expand_reduced(c) * (m / std::max(n, 1.0)));
                })
LOOM_DERIVATIVE_NAME(mean_op, [](const OpCall& call) { return reduces_all(call) ? "MeanBackward0" : "MeanBackward1"; })

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

using autograd::BackwardContext;
using autograd::inputs;
using autograd::none;
using autograd::outputs;

// How many input elements each result element reduces (values[0] the dims).
double reduced_count(const BackwardContext& c) {
  const IntArrayRef in = c.input_sizes(0);
  const IntArrayRef dims = c.int_list(0);
  if (dims.empty() || in.empty()) return static_cast<double>(shape_numel(in));
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(in[d < 0 ? d + static_cast<int64_t>(in.size()) : d]);
  return n;
}

// sign(x) * t, 0 where x is 0.
Tensor sgn_times(const Tensor& x, const Tensor& t) { return where(x > 0, t, where(x < 0, neg(t), 0.0)); }

// `t` / `d`, 0 where `d` is 0 (the divisor made safe first, so no inf or NaN
// reaches double backward through the branch where() drops).
Tensor div_or_zero(const Tensor& t, const Tensor& d) {
  const Tensor zero = d == 0;
  return where(zero, 0.0, t / where(zero, 1.0, d));
}

// The gradient of a reduction that picks values (amax, amin, the inf-norm)
// reaching the elements `hit` selects, split evenly among ties (PyTorch).
Tensor split_among(const BackwardContext& c, const Tensor& hit, const Tensor& g, size_t dims_at) {
  const Tensor count = sum(hit.to(g.dtype()), c.int_list(dims_at), /*keepdim=*/true);
  return where(hit, g / count, 0.0);
}

void extreme_backward(BackwardContext& c) {
  const Tensor hit = c.input(0) == unreduce(c, c.output(0));
  c.set(0, split_among(c, hit, unreduce(c, c.grad()), 0));
}

// max.dim/min.dim: each value's gradient goes back to the index it came from
// (a one-hot compare, which needs no indexing op).
void indexed_backward(BackwardContext& c) {
  const IntArrayRef in = c.input_sizes(0);
  const auto nd = static_cast<int64_t>(in.size());
  if (nd == 0) {
    c.set(0, c.grad(0));
    return;
  }
  const int64_t d = c.int_arg(0) < 0 ? c.int_arg(0) + nd : c.int_arg(0);
  const bool keepdim = c.bool_arg(1);
  DimVector at_shape(static_cast<size_t>(nd), 1);
  at_shape[d] = in[d];
  const Tensor at = arange(in[d], DType::Int64, c.device()).view(at_shape);
  const Tensor hit = at == autograd::unsqueeze_reduced(c.output(1), {d}, nd, keepdim);
  c.set(0, where(hit, autograd::unsqueeze_reduced(c.grad(0), {d}, nd, keepdim), 0.0));
}

// The product of all elements but one along the last dim of `t`: exclusive
// cumulative products from both ends, so zeros need no division.
Tensor prod_of_others(const Tensor& t) {
  const int64_t n = t.size(-1);
  DimVector one_shape(t.sizes());
  one_shape.back() = 1;
  const Tensor one = ones(one_shape, t.dtype(), t.device());
  const Tensor before = cumprod(cat({one, t.narrow(-1, 0, n - 1)}, -1), -1);
  const Tensor after = flip(cumprod(flip(cat({t.narrow(-1, 1, n - 1), one}, -1), {-1}), -1), {-1});
  return before * after;
}

// var/std: d var / dx = 2 (x - mean) / (N - correction); `g` is the
// gradient of var, shaped like the result.
Tensor var_backward(const BackwardContext& c, const Tensor& g) {
  const Tensor x = c.input(0);
  const double correction = c.is_none(1) ? 1.0 : c.float_arg(1);
  const Tensor centered = x - mean(x, c.int_list(0), /*keepdim=*/true);
  return autograd::unsqueeze_reduced(g, c.int_list(0), x.dim(), c.bool_arg(2)) * centered *
         (2.0 / (reduced_count(c) - correction));
}

// Sums `t` from the end of dim `d` to each position.
Tensor reverse_cumsum(const Tensor& t, int64_t d) { return flip(cumsum(flip(t, {d}), d), {d}); }

LOOM_DERIVATIVE_IN_FLOAT(prod_op, "ProdBackward1", inputs(0), none(), [](BackwardContext& c) {
  const Tensor x = c.input(0);
  if (x.dim() == 0) {
    c.set(0, c.grad());
    return;
  }
  if (x.numel() == 0) return;
  // Move the reduced dims last, merged into one, where prod_of_others works.
  const int64_t nd = x.dim();
  std::vector<bool> reduced(static_cast<size_t>(nd), c.int_list(0).empty());
  for (int64_t d : c.int_list(0)) reduced[d < 0 ? d + nd : d] = true;
  DimVector order, inverse(static_cast<size_t>(nd)), merged;
  for (const bool last : {false, true})
    for (int64_t d = 0; d < nd; ++d)
      if (reduced[d] == last) {
        inverse[d] = static_cast<int64_t>(order.size());
        order.push_back(d);
        if (!last) merged.push_back(x.size(d));
      }
  merged.push_back(-1);
  const Tensor moved = permute(x, order);
  const Tensor others = prod_of_others(moved.reshape(merged)).reshape(moved.sizes());
  c.set(0, unreduce(c, c.grad()) * permute(others, inverse));
})
LOOM_DERIVATIVE_NAME(prod_op, [](const OpCall& call) { return reduces_all(call) ? "ProdBackward0" : "ProdBackward1"; })
LOOM_DERIVATIVE(amax_op, "AmaxBackward0", inputs(0), outputs(0), extreme_backward)
LOOM_DERIVATIVE(amin_op, "AminBackward0", inputs(0), outputs(0), extreme_backward)
LOOM_DERIVATIVE(max_dim_op, "MaxBackward0", none(), outputs(1), indexed_backward)
LOOM_DERIVATIVE(min_dim_op, "MinBackward0", none(), outputs(1), indexed_backward)
LOOM_NOT_DIFFERENTIABLE(argmax_op)
LOOM_NOT_DIFFERENTIABLE(argmin_op)
LOOM_NOT_DIFFERENTIABLE(all_op)
LOOM_NOT_DIFFERENTIABLE(any_op)
LOOM_DERIVATIVE_IN_FLOAT(var_op, "VarBackward0", inputs(0), none(),
                [](BackwardContext& c) { c.set(0, var_backward(c, c.grad())); })
// d std = d var / (2 std); 0 where std is 0, as PyTorch.
LOOM_DERIVATIVE_IN_FLOAT(std_op, "StdBackward0", inputs(0), outputs(0),
                [](BackwardContext& c) { c.set(0, var_backward(c, div_or_zero(c.grad(), c.output(0)) * 0.5)); })
// PyTorch's norm_backward: x |x|^(p-2) g / norm^(p-1), with p = 1, 2 and inf
// written out, and 0 where the norm (or, for p < 1, x) is 0.
LOOM_DERIVATIVE_IN_FLOAT(norm_op, "NormBackward1", inputs(0), outputs(0), [](BackwardContext& c) {
  const double p = c.is_none(0) ? 2.0 : c.float_arg(0);
  if (p == 0) return;  // a count of nonzeros: flat
  const Tensor x = c.input(0);
  const Tensor norm = unreduce(c, c.output(0), 1);
  const Tensor g = unreduce(c, c.grad(), 1);
  if (p == 1) {
    c.set(0, sgn_times(x, g));
  } else if (p == 2) {
    c.set(0, x * div_or_zero(g, norm));
  } else {
    const Tensor abs_x = where(x < 0, neg(x), x);
    if (std::isinf(p)) {
      c.set(0, sgn_times(x, split_among(c, abs_x == norm, g, 1)));
    } else {
      // |x|^(p-1), with zeros kept out of pow (inf there for p < 1).
      const Tensor zero = x == 0;
      const Tensor scaled = where(zero, 0.0, pow(where(zero, 1.0, abs_x), p - 1));
      const Tensor safe_norm = where(norm == 0, 1.0, norm);
      c.set(0, sgn_times(x, scaled) * div_or_zero(g, pow(safe_norm, p - 1)));
    }
  }
})
LOOM_DERIVATIVE_IN_FLOAT(logsumexp_op, "LogsumexpBackward0", inputs(0), outputs(0), [](BackwardContext& c) {
  c.set(0, unreduce(c, c.grad()) * exp(c.input(0) - unreduce(c, c.output(0))));
})
LOOM_DERIVATIVE(cumsum_op, "CumsumBackward0", none(), none(), [](BackwardContext& c) {
  c.set(0, c.input_sizes(0).empty() ? c.grad() : reverse_cumsum(c.grad(), c.int_arg(0)));
})
// d y_j / d x_k = prod_{i <= j, i != k} x_i for j >= k. Before the first
// zero along dim that is y_j / x_k; at the first zero, the same sums with
// that zero read as 1 (a second cumprod); after it every product holds the
// zero. First-order exact with zeros; its own derivative (double backward)
// misses, at an exact zero, the terms of the elements after it.
LOOM_DERIVATIVE_IN_FLOAT(cumprod_op, "CumprodBackward0", inputs(0), outputs(0), [](BackwardContext& c) {
  const Tensor x = c.input(0);
  if (x.dim() == 0) {
    c.set(0, c.grad());
    return;
  }
  const int64_t d = c.int_arg(0);
  const Tensor g = c.grad();
  const Tensor is_zero = x == 0;
  const Tensor zeros_so_far = cumsum(is_zero, d);
  const Tensor before = zeros_so_far == 0;
  const Tensor first = is_zero & (zeros_so_far == 1);
  const Tensor at_before = reverse_cumsum(g * c.output(0), d) / where(before, x, 1.0);
  const Tensor at_first = reverse_cumsum(g * cumprod(where(first, 1.0, x), d), d);
  c.set(0, where(before, at_before, where(first, at_first, 0.0)));
})

LoomValue dims_value(const std::optional<IntArrayRef>& dim) {
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
