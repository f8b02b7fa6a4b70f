// nn_loss.h (core-internal) — what nll_loss, cross_entropy and
// _cross_entropy_backward share (ops_nn_loss.cpp, ops_cross_entropy_backward.cpp):
// argument checks, the class dim, and the one-hot pieces the composites are
// written with.
//
// Class dim 1 for an input of 2 or more dims, 0 for a 1-d input [C]; a
// class-index target has the input's shape without the class dim.
#pragma once

#include "core_op.h"
#include "opmath.h"

#include <loom/op_call.h>
#include <loom/tensor.h>

#include <string>
#include <string_view>

namespace loom::detail::loss {

// The LoomValue makers (core_op.h), for the files that use this namespace.
using detail::int_value;
using detail::str_of;
using detail::string_value;


// The op itself (ops_nn_loss.cpp), for the derivative formula beside its
// gradient op.
const OpDef& cross_entropy_op();

// The dtype the composites compute in: float32 for the 16-bit floats.
inline DType stats_dtype(DType t) { return opmath_dtype(t); }

inline int64_t class_dim_of(const Tensor& input) { return input.dim() == 1 ? 0 : 1; }

// A number as a 0-d tensor of `like`'s dtype (a loom Scalar would become a
// float32 tensor and round the smoothing factors for float64 inputs).
Tensor num(double v, const Tensor& like);

// numel / C in dtype dt, the samples a probability-target 'mean' averages
// over (NaN for an empty input, as 0/0).
Tensor prob_mean_divisor(const Tensor& input, DType dt);

// [1, C, 1, ...] with the input's ndim (just [C] for a 1-d input).
DimVector class_shape(const Tensor& input);

// A floating target of the input's shape holds class probabilities.
inline bool is_prob_target(const Tensor& input, const Tensor& target) { return input.sizes() == target.sizes(); }

// Every target is in [0, C) or ignore_index; else an error naming the class
// and its flat index (the kernels report the same words).
void check_target_range(const std::string& op, const Tensor& target, int64_t C, int64_t ignore_index);

// The one-hot mask target == class, [N, C, d...] (or [C]).
Tensor one_hot_mask(const Tensor& input, const Tensor& target);

// weight[target] (1 without weights) in dtype dt, 0 where the target is
// ignored: the target's shape.
Tensor target_weights(const Tensor& input, const Tensor& target, const Tensor& onehot, const Tensor* weight,
                      int64_t ignore_index, DType dt);

// Validates cross_entropy's arguments, found at call.args[first] (input),
// [first + 1] (target), [first + 2] (weight) and values 0..2 (reduction,
// ignore_index, label_smoothing), with cross_entropy's messages under the
// call's op name.
void check_cross_entropy_args(const OpCall& call, size_t first);

// The kernel operands from call.args[first ...]: input as it is, target in
// its own dtype, weight (when given) cast to the input's dtype.
void set_cross_entropy_inputs(OpCall& call, size_t first);

// The loss's shape: the input without its class dim ('none'), else 0-d.
DimVector loss_shape(const Tensor& input, std::string_view reduction);

}  // namespace loom::detail::loss
