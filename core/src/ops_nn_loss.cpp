// ops_nn_loss.cpp — nll_loss and cross_entropy (torch.nn.functional), both
// composites. Class-index targets pick their log-probability through a
// one-hot mask (target == arange(C)), which needs no gather kernel and
// reads the input once; the targets themselves are checked on the host
// first, so an out-of-range class is an error naming it, not a wrong sum.
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <limits>
#include <string_view>

namespace loom {
namespace {

std::string_view str_of(const LoomValue& v) {
  return {v.u.str.data, static_cast<size_t>(v.u.str.size)};
}

LoomValue string_value(const std::string& s) {
  LoomValue v{};
  v.kind = LOOM_VALUE_STRING;
  v.u.str.data = s.data();
  v.u.str.size = static_cast<int64_t>(s.size());
  return v;
}

LoomValue int_value(int64_t i) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT;
  v.u.i = i;
  return v;
}

// A number as a 0-d tensor of `like`'s dtype (a loom Scalar would become a
// float32 tensor and round the smoothing factors for float64 inputs).
Tensor num(double v, const Tensor& like) { return full({}, v, like.dtype(), like.device()); }

DType stats_dtype(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t; }

int64_t class_dim_of(const Tensor& input) { return input.dim() == 1 ? 0 : 1; }

// [1, C, 1, ...] with the input's ndim (just [C] for a 1-d input).
DimVector class_shape(const Tensor& input) {
  DimVector s(static_cast<size_t>(input.dim()), 1);
  s[static_cast<size_t>(class_dim_of(input))] = input.size(class_dim_of(input));
  return s;
}

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

// Every target is in [0, C) or ignore_index; else an error naming the class.
void check_target_range(const std::string& op, const Tensor& target, int64_t C, int64_t ignore_index) {
  const std::vector<int64_t> t = target.cpu().contiguous().to_vector<int64_t>();
  for (size_t i = 0; i < t.size(); ++i)
    LOOM_CHECK(t[i] == ignore_index || (t[i] >= 0 && t[i] < C), op, ": target ", t[i],
               " is out of bounds for ", C, " classes (at flat index ", i, " of the target; ignore_index is ",
               ignore_index, ")");
}

// The one-hot mask target == class, [N, C, d...] (or [C]).
Tensor one_hot_mask(const Tensor& input, const Tensor& target) {
  const int64_t cd = class_dim_of(input);
  const Tensor classes = arange(input.size(cd), DType::Int64, input.device()).reshape(class_shape(input));
  return target.unsqueeze(cd) == classes;
}

// weight[target] (1 without weights), 0 where the target is ignored.
Tensor target_weights(const Tensor& input, const Tensor& target, const Tensor& onehot, const Tensor* weight,
                      int64_t ignore_index, DType dt) {
  const Tensor valid = target != Scalar(ignore_index);
  if (!weight || !weight->defined()) return valid.to(dt);
  const Tensor w = sum(where(onehot, weight->to(dt).reshape(class_shape(input)), Scalar(0.0)),
                       IntArrayRef{class_dim_of(input)});
  return where(valid, w, Scalar(0.0));
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

bool is_prob_target(const Tensor& input, const Tensor& target) { return input.sizes() == target.sizes(); }

void prepare_cross_entropy(OpCall& call) {
  const Tensor &input = call.arg(0), &target = call.arg(1);
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
  check_weight(op, call.args[2], C);
  check_reduction(op, str_of(call.values[0]));
  auto& plan = call.outputs.emplace_back();
  plan.dtype = input.dtype();
  // The result's shape, so out= is resized right: a scalar, or for
  // reduction='none' one loss per sample (the input without its class dim).
  if (str_of(call.values[0]) == "none") {
    plan.sizes = DimVector(input.sizes());
    plan.sizes.erase(static_cast<size_t>(class_dim_of(input)));
  }
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
    else r = -sum(prod) / num(input.numel() == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                  : static_cast<double>(input.numel() / C), logp);
  } else {
    const Tensor loss = nll(logp, target, weight, reduction, ignore_index, call.op->name());
    if (ls == 0) {
      r = loss;
    } else {
      // PyTorch's label smoothing: (1 - ls) * nll + ls / C * Σ_c -w_c log p_c,
      // the smoothing term zero at ignored targets and normalised like nll.
      Tensor smooth = weighted ? -sum(logp * weight->to(dt).reshape(class_shape(input)), IntArrayRef{cd}) : -sum(logp, IntArrayRef{cd});
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

LOOM_CORE_OP(cross_entropy_op,
             "cross_entropy(Tensor self, Tensor target, Tensor? weight=None, str reduction='mean', "
             "int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
             prepare_cross_entropy, cross_entropy_composite)

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, const std::string& reduction,
                int64_t ignore_index) {
  return detail::run_op(nll_loss_op(), {&input, &target, &weight},
                        {string_value(reduction), int_value(ignore_index)});
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     const std::string& reduction, double label_smoothing) {
  return detail::run_op(cross_entropy_op(), {&input, &target, &weight},
                        {string_value(reduction), int_value(ignore_index), detail::float_value(label_smoothing)});
}

}  // namespace loom
