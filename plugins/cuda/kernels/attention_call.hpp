// Reading a fused attention kernel call (docs/kernel_conventions.md, "Nn")
// into the Problem of attention_ops.cuh: which descriptor is which, the
// batch walk over their own strides, and what the kernels decline. Host
// code, so tests/attention_ops_test.cu runs it on descriptors of host
// arrays and feeds the result to the tile algorithm.
//
//   _scaled_dot_product_attention_fused: inputs (q, k, v, mask), outputs
//     (out, lse);
//   _scaled_dot_product_attention_backward: inputs (grad_out, q, k, v, mask,
//     out, lse), outputs (grad_q, grad_k, grad_v);
//   values (is_causal, scale) for both. The core has broadcast every tensor
//   to the full batch shape (stride 0 where broadcast): [batch..., L|S, E|Ev],
//   mask [batch..., L, S] (absent: ndim -1), lse [batch..., L].
#pragma once

#include "vendor/gpu_target.hpp"
#include "attention_ops.cuh"

#include <loom/plugin.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE::attention {

enum class Pass { Forward, Backward };

inline const char* op_name(Pass pass) {
  return pass == Pass::Forward ? "_scaled_dot_product_attention_fused" : "_scaled_dot_product_attention_backward";
}

template <class T>
constexpr int32_t dtype_code() {
  if constexpr (std::is_same_v<T, __half>) return LOOM_DTYPE_FLOAT16;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return LOOM_DTYPE_BFLOAT16;
  else if constexpr (std::is_same_v<T, float>) return LOOM_DTYPE_FLOAT32;
  else return LOOM_DTYPE_FLOAT64;
}

namespace call_detail {

[[noreturn]] inline void fail(int32_t status, Pass pass, const std::string& why) {
  throw plugin::Failure(status, std::string(LOOM_GPU_NAME " ") + op_name(pass) + ": " + why);
}

// `t` must be `nd`-d with q's batch sizes and the given trailing sizes
// (`rows` < 0: one trailing dim fewer, lse's [batch..., L]) and dtype.
inline void check_tensor(const LoomTensorDesc& t, const char* what, const LoomTensorDesc& q, int64_t rows,
                         int64_t cols, int32_t dtype, Pass pass) {
  const int32_t nb = q.ndim - 2, nd = cols < 0 ? nb + 1 : nb + 2;
  bool ok = t.ndim == nd && t.dtype == dtype;
  for (int32_t d = 0; ok && d < nb; ++d) ok = t.shape[d] == q.shape[d];
  if (ok) ok = t.shape[nb] == rows && (cols < 0 || t.shape[nb + 1] == cols);
  if (!ok)
    fail(LOOM_STATUS_INVALID_ARGUMENT, pass,
         std::string(what) + " must be a " + plugin::dtype_name(dtype) + " tensor with the query's " +
             std::to_string(nb) + " batch dims and trailing sizes [" + std::to_string(rows) +
             (cols < 0 ? "" : ", " + std::to_string(cols)) + "]");
}

}  // namespace call_detail

// The call as a Problem (row_dot left null: the launcher supplies it).
// Throws Failure(INVALID_ARGUMENT) for a call outside the core's contract
// and Failure(UNSUPPORTED) for one the kernels do not take, so the core
// runs the composite: head dims E or Ev of 0 or above kMaxHeadDim, no keys
// (S = 0: the composite's zeros), a non-finite scale, a batch walk of more
// than kMaxKernelDims dims, more than INT_MAX blocks.
template <class T>
Problem<T> make_problem(const LoomKernelCall& c, Pass pass) {
  using call_detail::check_tensor;
  using call_detail::fail;
  const bool fwd = pass == Pass::Forward;
  if (c.num_inputs != (fwd ? 4 : 7) || c.num_outputs != (fwd ? 2 : 3) || c.num_values != 2)
    fail(LOOM_STATUS_INVALID_ARGUMENT, pass,
         fwd ? "expected (query, key, value, attn_mask), (is_causal, scale) and (output, logsumexp)"
             : "expected (grad_out, query, key, value, attn_mask, output, logsumexp), (is_causal, scale) and "
               "(grad_query, grad_key, grad_value)");
  const int first = fwd ? 0 : 1;
  const LoomTensorDesc &q = c.inputs[first], &k = c.inputs[first + 1], &v = c.inputs[first + 2];
  const LoomTensorDesc& mask = c.inputs[first + 3];
  if (q.ndim < 2) fail(LOOM_STATUS_INVALID_ARGUMENT, pass, "query must have at least 2 dims");
  const int32_t nb = q.ndim - 2, code = dtype_code<T>(), stat = dtype_code<opmath_t<T>>();
  Problem<T> p;
  p.L = q.shape[nb];
  p.S = k.ndim == q.ndim ? k.shape[nb] : -1;
  const int64_t E = q.shape[nb + 1], Ev = v.ndim == q.ndim ? v.shape[nb + 1] : -1;
  check_tensor(q, "query", q, p.L, E, code, pass);
  check_tensor(k, "key", q, p.S, E, code, pass);
  check_tensor(v, "value", q, p.S, Ev, code, pass);
  const bool has_mask = !plugin::is_absent(mask);
  if (has_mask)
    check_tensor(mask, "attn_mask", q, p.L, p.S, mask.dtype == LOOM_DTYPE_BOOL ? LOOM_DTYPE_BOOL : code, pass);
  // The slots' descriptors, in Slot order (nullptr: not part of this pass).
  const LoomTensorDesc* slots[kSlots] = {&q, &k, &v, has_mask ? &mask : nullptr};
  if (fwd) {
    slots[kOut] = &c.outputs[0];
    slots[kLse] = &c.outputs[1];
  } else {
    slots[kGradOut] = &c.inputs[0];
    slots[kOut] = &c.inputs[5];
    slots[kLse] = &c.inputs[6];
    slots[kGradQ] = &c.outputs[0];
    slots[kGradK] = &c.outputs[1];
    slots[kGradV] = &c.outputs[2];
    check_tensor(*slots[kGradOut], "grad_out", q, p.L, Ev, code, pass);
    check_tensor(*slots[kGradQ], "grad_query", q, p.L, E, code, pass);
    check_tensor(*slots[kGradK], "grad_key", q, p.S, E, code, pass);
    check_tensor(*slots[kGradV], "grad_value", q, p.S, Ev, code, pass);
  }
  check_tensor(*slots[kOut], "output", q, p.L, Ev, code, pass);
  check_tensor(*slots[kLse], "logsumexp", q, p.L, -1, stat, pass);

  p.causal = c.values[0].u.i != 0;
  const double scale = plugin::value_float(c, 1);
  if (E < 1 || E > kMaxHeadDim || Ev < 1 || Ev > kMaxHeadDim)
    fail(LOOM_STATUS_UNSUPPORTED, pass,
         "head dims (E = " + std::to_string(E) + ", Ev = " + std::to_string(Ev) + ") must be in [1, " +
             std::to_string(kMaxHeadDim) + "]");
  if (p.S == 0) fail(LOOM_STATUS_UNSUPPORTED, pass, "no keys (S = 0)");
  if (!std::isfinite(scale)) fail(LOOM_STATUS_UNSUPPORTED, pass, "non-finite scale");
  p.E = static_cast<int32_t>(E);
  p.Ev = static_cast<int32_t>(Ev);
  p.scale = static_cast<opmath_t<T>>(scale);
  p.mask_kind = !has_mask ? MaskKind::None : mask.dtype == LOOM_DTYPE_BOOL ? MaskKind::Bool : MaskKind::Additive;

  // Strides inside a batch entry, and the batch walk over the leading dims.
  const std::vector<int64_t> zeros(static_cast<size_t>(nb), 0);
  const int64_t* batch_strides[kSlots];
  for (int s = 0; s < kSlots; ++s) {
    const LoomTensorDesc* t = slots[s];
    batch_strides[s] = t ? t->strides : zeros.data();
    if (!t) continue;
    p.at[s].row = t->strides[nb];
    p.at[s].col = s == kLse ? 0 : t->strides[nb + 1];
  }
  if (!make_geometry<kSlots>(nb, q.shape, batch_strides, p.walk))
    fail(LOOM_STATUS_UNSUPPORTED, pass, "more than " + std::to_string(kMaxKernelDims) + " non-mergeable batch dims");
  p.batch = p.walk.numel;

  p.q = plugin::data_ptr<const T>(q);
  p.k = plugin::data_ptr<const T>(k);
  p.v = plugin::data_ptr<const T>(v);
  p.mask = has_mask ? static_cast<const void*>(plugin::data_ptr<const char>(mask)) : nullptr;
  p.out = plugin::data_ptr<T>(*slots[kOut]);
  p.lse = plugin::data_ptr<opmath_t<T>>(*slots[kLse]);
  if (!fwd) {
    p.grad_out = plugin::data_ptr<const T>(*slots[kGradOut]);
    p.grad_q = plugin::data_ptr<T>(*slots[kGradQ]);
    p.grad_k = plugin::data_ptr<T>(*slots[kGradK]);
    p.grad_v = plugin::data_ptr<T>(*slots[kGradV]);
  }
  const int64_t most = fwd ? forward_blocks(p) : std::max(row_dot_blocks(p), grad_kv_blocks(p));
  if (most > INT_MAX) fail(LOOM_STATUS_UNSUPPORTED, pass, "too many blocks (" + std::to_string(most) + ")");
  return p;
}

}  // namespace loom::LOOM_GPU_NAMESPACE::attention
