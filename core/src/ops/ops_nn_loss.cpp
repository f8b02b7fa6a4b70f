// ops_nn_loss.cpp — nll_loss and cross_entropy (torch.nn.functional), and
// the helpers they share with cross_entropy's gradient op
// (ops_cross_entropy_backward.cpp, which also holds cross_entropy's
// derivative). Both ops have composites; cross_entropy may also have device
// kernels (the CPU and CUDA plugins fuse it for class-index targets: what
// they see is docs/kernel_conventions.md, "Nn"). Class-index targets pick
// their log-probability through a one-hot mask (target == arange(C)), which
// needs no gather kernel and reads the input once; the targets themselves
// are checked on the host first, so an out-of-range class is an error
// naming it, not a wrong sum.
#include "core_op.h"
#include "nn_loss.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <limits>
#include <string_view>

namespace loom {

namespace detail::loss {

Tensor num(double v, const Tensor& like) { return full({}, v, like.dtype(), like.device()); }

Tensor prob_mean_divisor(const Tensor& input, DType dt) {
  const int64_t C = input.size(class_dim_of(input));
  return full({}, input.numel() == 0 ? std::numeric_limits<double>::quiet_NaN()
                                     : static_cast<double>(input.numel() / C), dt, input.device());
}

DimVector class_shape(const Tensor& input) {
  DimVector s(static_cast<size_t>(input.dim()), 1);
  s[static_cast<size_t>(class_dim_of(input))] = input.size(class_dim_of(input));
  return s;
}

void check_target_range(const std::string& op, const Tensor& target, int64_t C, int64_t ignore_index) {
  const std::vector<int64_t> t = target.cpu().contiguous().to_vector<int64_t>();
  for (size_t i = 0; i < t.size(); ++i)
    LOOM_CHECK(t[i] == ignore_index || (t[i] >= 0 && t[i] < C), op, ": target ", t[i],
               " is out of bounds for ", C, " classes (at flat index ", i, " of the target; ignore_index is ",
               ignore_index, ")");
}

Tensor one_hot_mask(const Tensor& input, const Tensor& target) {
  const int64_t cd = class_dim_of(input);
  const Tensor classes = arange(input.size(cd), DType::Int64, input.device()).reshape(class_shape(input));
  return target.unsqueeze(cd) == classes;
}

Tensor target_weights(const Tensor& input, const Tensor& target, const Tensor& onehot, const Tensor* weight,
                      int64_t ignore_index, DType dt) {
  const Tensor valid = target != Scalar(ignore_index);
  if (!weight || !weight->defined()) return valid.to(dt);
  const Tensor w = sum(where(onehot, weight->to(dt).reshape(class_shape(input)), Scalar(0.0)),
                       IntArrayRef{class_dim_of(input)});
  return where(valid, w, Scalar(0.0));
}

}  // namespace detail::loss

namespace {

using namespace detail::loss;

void check_reduction(const std::string& op, std::string_view r) {
  LOOM_CHECK(r == "none" || r == "mean" || r == "sum", op, ": reduction must be 'none', 'mean' or 'sum', got '",
             r, "'");
}

void check_weight(const std::string& op, const Tensor* w, int64_t C) {
  if (!w || !w->defined()) return;
  LOOM_CHECK(is_floating_point(w->dtype()), op, ": expected a floating point weight, got ", name(w->dtype()));
  LOOM_CHECK(w->dim() == 1 && w->numel() == C, op, ": weight tensor should be defined either for all ", C,
             " classes or no classes but got weight tensor of shape: ", shape_str(w->sizes()));
}

// Class-index target checks shared by nll_loss and cross_entropy.
void check_index_target(const std::string& op, const Tensor& input, const Tensor& target) {
  LOOM_CHECK(target.dtype() == DType::Int64, op, ": expected target of dtype int64 (class indices), got ",
             name(target.dtype()));
  if (input.dim() == 1) {
    LOOM_CHECK(target.dim() == 0, op, ": expected a 0-d target for a 1-d input (C), got target of shape ",
               shape_str(target.sizes()));
    return;
  }
  LOOM_CHECK(target.dim() >= 1 && target.size(0) == input.size(0), op, ": expected input batch_size (",
             input.size(0), ") to match target batch_size (", target.dim() >= 1 ? target.size(0) : 0, ")");
  DimVector want;
  for (int64_t d = 0; d < input.dim(); ++d)
    if (d != 1) want.push_back(input.size(d));
  LOOM_CHECK(target.sizes() == IntArrayRef(want), op, ": expected target of shape ", shape_str(want),
             " for input of shape ", shape_str(input.sizes()), ", got ", shape_str(target.sizes()));
}

// ---------------------------------------------------------------- nll_loss ---

void prepare_nll(OpCall& call) {
  const Tensor &input = call.arg(0), &target = call.arg(1);
  const std::string& op = call.op->name();
  LOOM_CHECK(input.dim() >= 1, op, ": expected input with 1 or more dims, got 0");
  LOOM_CHECK(is_floating_point(input.dtype()), op, ": expected a floating point input, got ", name(input.dtype()));
  check_index_target(op, input, target);
  check_weight(op, call.args[2], input.size(class_dim_of(input)));
  check_reduction(op, str_of(call.values[0]));
  auto& plan = call.outputs.emplace_back();
  plan.dtype = input.dtype();
  if (str_of(call.values[0]) == "none") plan.sizes = DimVector(target.sizes());
  call.compute_dtype = input.dtype();
}

Tensor nll(const Tensor& input, const Tensor& target, const Tensor* weight, std::string_view reduction,
           int64_t ignore_index, const std::string& op) {
  const int64_t cd = class_dim_of(input);
  check_target_range(op, target, input.size(cd), ignore_index);
  const DType dt = stats_dtype(input.dtype());
  const Tensor onehot = one_hot_mask(input, target);
  const Tensor picked = sum(where(onehot, input.to(dt), Scalar(0.0)), IntArrayRef{cd});
  const Tensor w = target_weights(input, target, onehot, weight, ignore_index, dt);
  const Tensor loss = where(target != Scalar(ignore_index), -(picked * w), Scalar(0.0));
  Tensor r = reduction == "none" ? loss : reduction == "sum" ? sum(loss) : sum(loss) / sum(w);
  return r.to(input.dtype());
}

void nll_composite(OpCall& call) {
  call.result() = nll(call.arg(0), call.arg(1), call.args[2], str_of(call.values[0]), call.values[1].u.i,
                      call.op->name());
}

LOOM_CORE_OP(nll_loss_op,
             "nll_loss(Tensor self, Tensor target, Tensor? weight=None, str reduction='mean', "
             "int ignore_index=-100) -> Tensor",
             prepare_nll, nll_composite)

// ----------------------------------------------------------- cross_entropy ---

void prepare_cross_entropy(OpCall& call) {
  check_cross_entropy_args(call, 0);
  const Tensor& input = call.arg(0);
  set_cross_entropy_inputs(call, 0);
  auto& plan = call.outputs.emplace_back();
  plan.dtype = input.dtype();
  // The result's shape, so out= is resized right: a scalar, or for
  // reduction='none' one loss per sample (the input without its class dim).
  plan.sizes = loss_shape(input, str_of(call.values[0]));
  call.compute_dtype = input.dtype();
}

void cross_entropy_composite(OpCall& call) {
  const Tensor &input = call.arg(0), &target = call.arg(1);
  const Tensor* weight = call.args[2];
  const bool weighted = weight && weight->defined();
  const std::string_view reduction = str_of(call.values[0]);
  const int64_t ignore_index = call.values[1].u.i, cd = class_dim_of(input), C = input.size(cd);
  const double ls = call.values[2].u.f;
  const DType dt = stats_dtype(input.dtype());
  const Tensor logp = log_softmax(input, cd, dt);
  Tensor r;
  if (is_prob_target(input, target)) {
    const Tensor t = ls > 0 ? target.to(dt) * num(1 - ls, logp) + num(ls / static_cast<double>(C), logp)
                            : target.to(dt);
    Tensor prod = logp * t;
    if (weighted) prod = prod * weight->to(dt).reshape(class_shape(input));
    if (reduction == "none") r = -sum(prod, IntArrayRef{cd});
    else if (reduction == "sum") r = -sum(prod);
    else r = -sum(prod) / prob_mean_divisor(input, dt);
  } else {
    const Tensor loss = nll(logp, target, weight, reduction, ignore_index, call.op->name());
    if (ls == 0) {
      r = loss;
    } else {
      // PyTorch's label smoothing: (1 - ls) * nll + ls / C * Σ_c -w_c log p_c,
      // the smoothing term zero at ignored targets and normalised like nll.
      Tensor smooth = weighted ? -sum(logp * weight->to(dt).reshape(class_shape(input)), IntArrayRef{cd})
                               : -sum(logp, IntArrayRef{cd});
      const Tensor valid = target != Scalar(ignore_index);
      smooth = where(valid, smooth, Scalar(0.0));
      Tensor s = smooth;
      if (reduction == "sum") s = sum(smooth);
      else if (reduction == "mean")
        s = sum(smooth) / sum(target_weights(input, target, one_hot_mask(input, target), weight, ignore_index, dt));
      r = loss.to(dt) * num(1 - ls, logp) + s * num(ls / static_cast<double>(C), logp);
    }
  }
  call.result() = r.to(input.dtype());
}

}  // namespace

namespace detail::loss {

LOOM_CORE_OP(cross_entropy_op,
             "cross_entropy(Tensor self, Tensor target, Tensor? weight=None, str reduction='mean', "
             "int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
             prepare_cross_entropy, cross_entropy_composite)

void check_cross_entropy_args(const OpCall& call, size_t first) {
  const Tensor &input = call.arg(first), &target = call.arg(first + 1);
  const std::string& op = call.op->name();
  LOOM_CHECK(input.dim() >= 1, op, ": expected input with 1 or more dims, got 0");
  LOOM_CHECK(is_floating_point(input.dtype()), op, ": expected a floating point input, got ", name(input.dtype()));
  const int64_t C = input.size(class_dim_of(input));
  const double ls = call.values[2].u.f;
  LOOM_CHECK(ls >= 0.0 && ls <= 1.0, op, ": label_smoothing must be between 0.0 and 1.0, got ", ls);
  if (is_prob_target(input, target)) {
    LOOM_CHECK(is_floating_point(target.dtype()), op,
               ": expected a floating point target for class probabilities (same shape as the input), got ",
               name(target.dtype()));
    LOOM_CHECK(call.values[1].u.i < 0, op, ": ignore_index is not supported for floating point target");
  } else {
    check_index_target(op, input, target);
  }
  check_weight(op, call.args[first + 2], C);
  check_reduction(op, str_of(call.values[0]));
}

void set_cross_entropy_inputs(OpCall& call, size_t first) {
  const Tensor &input = call.arg(first), &target = call.arg(first + 1);
  set_input(call, first, input.dtype(), input.sizes());
  set_input(call, first + 1, target.dtype(), target.sizes());
  const Tensor* w = call.args[first + 2];
  set_input(call, first + 2, input.dtype(), w && w->defined() ? w->sizes() : IntArrayRef());
}

DimVector loss_shape(const Tensor& input, std::string_view reduction) {
  if (reduction != "none") return {};
  DimVector s(input.sizes());
  s.erase(static_cast<size_t>(class_dim_of(input)));
  return s;
}

}  // namespace detail::loss

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  return nll_loss(input, target, weight, reduction_name(reduction), ignore_index);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, const std::string& reduction,
                int64_t ignore_index) {
  return detail::run_op(nll_loss_op(), {&input, &target, &weight},
                        {detail::string_value(reduction), detail::int_value(ignore_index)});
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     const std::string& reduction, double label_smoothing) {
  return detail::run_op(detail::loss::cross_entropy_op(), {&input, &target, &weight},
                        {detail::string_value(reduction), detail::int_value(ignore_index),
                         detail::float_value(label_smoothing)});
}

}  // namespace loom
