// attention.h (core-internal) — what the three attention ops share
// (ops_attention.cpp, ops_attention_backward.cpp): argument checks, the
// operand views a kernel sees, and the composite pieces written with ops.
//
// Shapes: query [batch..., L, E], key [batch..., S, E], value [batch..., S, Ev],
// attn_mask broadcastable to [batch..., L, S] (bool: keep where true; else of
// the query's dtype, added). The batch dims of the four broadcast together.
#pragma once

#include <loom/op_call.h>

#include <string_view>

namespace loom::detail::attention {

// float32 for float16/bfloat16 (what the fused composites compute in and
// the dtype of their logsumexp), the dtype itself otherwise.
DType compute_dtype(DType t);

// nullptr for an absent or undefined Tensor? argument.
inline const Tensor* given(const Tensor* t) { return t && t->defined() ? t : nullptr; }

// Checks q, k, v and the mask for `op` (dims, dtypes, sizes, the mask's
// broadcast, no mask together with is_causal); returns the batch shape.
DimVector check_operands(std::string_view op, const Tensor& q, const Tensor& k, const Tensor& v,
                         const Tensor* mask, bool causal);

// Sets call.inputs[first .. first + 3] to q, k, v and the mask, each seen
// with the full batch shape (stride 0 where broadcast; no copies): q
// [batch..., L, E], k [batch..., S, E], v [batch..., S, Ev], the mask
// [batch..., L, S] in its own dtype (absent: ndim -1).
void set_operands(OpCall& call, size_t first, IntArrayRef batch);

// Whether `sizes` broadcasts to `target` (PyTorch's rules, one way).
bool broadcasts_to(IntArrayRef sizes, IntArrayRef target);

// [batch..., a] and [batch..., a, b].
DimVector with_dims(IntArrayRef batch, int64_t a);
DimVector with_dims(IntArrayRef batch, int64_t a, int64_t b);

// `t` ([batch..., L, S]) with `fill` where the causal triangle (j > i: the
// top-left aligned one) or a bool mask excludes a score.
Tensor exclude(const Tensor& t, const Tensor& q, const Tensor& k, const Tensor* mask, bool causal, Scalar fill);

// scale·q·kᵀ, −inf where excluded, plus a float mask; in q's dtype, shape
// [batch..., L, S]. q, k and a float mask already share one dtype.
Tensor masked_scores(const Tensor& q, const Tensor& k, const Tensor* mask, bool causal, double scale);

// What the fused composites compute on: q, k, v and the mask expanded to
// the full batch shape (views) and cast to `dtype` (a bool mask stays
// bool); mask undefined when absent.
struct Operands {
  Tensor q, k, v, mask;
  const Tensor* mask_ptr() const { return given(&mask); }
};
Operands operands(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, IntArrayRef batch,
                  DType dtype);
// `t` expanded to `shape` (a view) and cast to `dtype`.
Tensor expanded(const Tensor& t, IntArrayRef shape, DType dtype);

// The attention probabilities P = exp(scores − lse) and, when `grad_out` is
// defined, the scores' gradient dS = P ∘ (dO·vᵀ − rowsum(dO ∘ O)), in the
// operands' dtype (grad_out, out and lse are cast). A row whose every
// score is −inf has lse = −inf and P = NaN, as the forward gives it. dS is
// 0 where causal or a bool mask excludes the score, NaN or not: what the
// decomposed path's `where` gives (its gradient skips excluded scores), so
// a fully masked row's query gets a zero gradient on both paths. (An
// additive −inf row gives NaN gradients on both.)
struct Probabilities {
  Tensor p, ds;
};
Probabilities probabilities(const Tensor& grad_out, const Operands& x, const Tensor& out, const Tensor& lse,
                            bool causal, double scale);

}  // namespace loom::detail::attention
