// matmul entry: validates the call, simplifies the batch dims into a
// MatmulProblem, and picks a path. float32 and bfloat16 go to oneDNN when it
// has a real (non-reference) implementation for the layout on this CPU and
// the problem is big enough to repay its per-call setup; everything else —
// float64, float16, integers, tiny or exotic problems — runs the blocked loop.
#include "common.hpp"
#include "kernels.hpp"
#include "matmul.hpp"

#include <algorithm>
#include <cstring>

namespace loom::cpu {
namespace {

// Below this many multiply-adds the loop beats oneDNN's per-call cost
// (memory objects, stream, dispatch: a few microseconds).
constexpr int64_t kOnednnMinMacs = 8192;

void check_operand(const LoomTensorDesc& t, const LoomTensorDesc& c, const char* what) {
  if (t.ndim != c.ndim || t.dtype != c.dtype)
    fail(LOOM_STATUS_INVALID_ARGUMENT,
         "cpu matmul: %s must have the output's ndim and dtype (%d/%s vs %d/%s)", what, t.ndim,
         plugin::dtype_name(t.dtype), c.ndim, plugin::dtype_name(c.dtype));
}

MatmulProblem make_problem(const LoomTensorDesc& a, const LoomTensorDesc& b,
                           const LoomTensorDesc& c) {
  const int32_t nd = c.ndim;
  if (nd < 2) fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu matmul: operands need ndim >= 2, got %d", nd);
  check_operand(a, c, "self");
  check_operand(b, c, "other");
  MatmulProblem p;
  p.dtype = c.dtype;
  p.M = c.shape[nd - 2];
  p.N = c.shape[nd - 1];
  p.K = a.shape[nd - 1];
  if (a.shape[nd - 2] != p.M || b.shape[nd - 2] != p.K || b.shape[nd - 1] != p.N)
    fail(LOOM_STATUS_INVALID_ARGUMENT,
         "cpu matmul: shapes [..., %lld, %lld] x [..., %lld, %lld] -> [..., %lld, %lld] do not "
         "match",
         static_cast<long long>(a.shape[nd - 2]), static_cast<long long>(a.shape[nd - 1]),
         static_cast<long long>(b.shape[nd - 2]), static_cast<long long>(b.shape[nd - 1]),
         static_cast<long long>(p.M), static_cast<long long>(p.N));
  p.a_m = a.strides[nd - 2];
  p.a_k = a.strides[nd - 1];
  p.b_k = b.strides[nd - 2];
  p.b_n = b.strides[nd - 1];
  p.c_m = c.strides[nd - 2];
  p.c_n = c.strides[nd - 1];
  p.a = static_cast<const char*>(a.data) + a.byte_offset;
  p.b = static_cast<const char*>(b.data) + b.byte_offset;
  p.c = static_cast<char*>(c.data) + c.byte_offset;
  p.nbatch = 0;
  for (int32_t d = 0; d < nd - 2; ++d) {
    const int64_t size = c.shape[d];
    // An operand of size 1 in a batch dim is broadcast whatever its stride.
    const auto bstride = [&](const LoomTensorDesc& t, const char* what) -> int64_t {
      if (t.shape[d] == size) return size == 1 ? 0 : t.strides[d];
      if (t.shape[d] == 1) return 0;
      fail(LOOM_STATUS_INVALID_ARGUMENT,
           "cpu matmul: %s has batch size %lld at dim %d, output has %lld", what,
           static_cast<long long>(t.shape[d]), d, static_cast<long long>(size));
    };
    const int64_t sa = bstride(a, "self"), sb = bstride(b, "other"), sc = c.strides[d];
    if (size == 1) continue;
    if (size == 0) {  // no elements at all
      p.nbatch = 1;
      p.batch[0] = 0;
      p.a_batch_stride[0] = p.b_batch_stride[0] = p.c_batch_stride[0] = 0;
      return p;
    }
    const int32_t i = p.nbatch;
    if (i > 0 && p.a_batch_stride[i - 1] == sa * size && p.b_batch_stride[i - 1] == sb * size &&
        p.c_batch_stride[i - 1] == sc * size) {
      p.batch[i - 1] *= size;
      p.a_batch_stride[i - 1] = sa;
      p.b_batch_stride[i - 1] = sb;
      p.c_batch_stride[i - 1] = sc;
      continue;
    }
    p.batch[i] = size;
    p.a_batch_stride[i] = sa;
    p.b_batch_stride[i] = sb;
    p.c_batch_stride[i] = sc;
    ++p.nbatch;
  }
  // A batch of products with one shared `other` whose rows of self and of
  // the output follow on across the batch (a linear layer on [B, T, in]) is
  // one product with B·M rows: one large GEMM instead of B small ones.
  while (p.nbatch > 0) {
    const int32_t i = p.nbatch - 1;
    if (p.b_batch_stride[i] != 0 || p.a_batch_stride[i] != p.M * p.a_m || p.c_batch_stride[i] != p.M * p.c_m ||
        (p.M > 1 && (p.a_m == 0 || p.c_m == 0)))
      break;
    p.M *= p.batch[i];
    p.nbatch = i;
  }
  return p;
}

}  // namespace

void matmul(const LoomKernelCall& c) {
  expect_arity(c, "matmul", 2, 1);
  const LoomTensorDesc& out = c.outputs[0];
  if (out.dtype == LOOM_DTYPE_BOOL || out.dtype < 0 || out.dtype >= LOOM_DTYPE_COUNT)
    fail_dtype("matmul", out.dtype);
  if (out.ndim > kMaxBatchDims + 2)
    fail(LOOM_STATUS_UNSUPPORTED, "cpu matmul: %d dims is more than supported", out.ndim);
  const MatmulProblem p = make_problem(c.inputs[0], c.inputs[1], out);
  const int64_t batches = p.batch_count();
  if (batches == 0 || p.M == 0 || p.N == 0) return;
  const bool onednn_dtype = p.dtype == LOOM_DTYPE_FLOAT32 || p.dtype == LOOM_DTYPE_BFLOAT16;
#if LOOM_CPU_HAVE_ONEDNN
  if (onednn_dtype && p.K > 0 && batches * p.M * p.N * p.K >= kOnednnMinMacs &&
      matmul_onednn(p))
    return;
#else
  (void)onednn_dtype;
  (void)kOnednnMinMacs;
#endif
  matmul_loop(p);
}

// linear(input, weight, bias) = input @ weight^T + bias in one GEMM: the
// output's rows start as the bias and the product accumulates onto them
// (beta 1), so the bias costs no pass and no dispatch of its own (the core's
// composite is matmul then add_). float32 with contiguous operands, the
// layout nn.Linear has; anything else declines to the composite.
void linear(const LoomKernelCall& c) {
  expect_arity(c, "linear", 3, 1);
  const LoomTensorDesc &x = c.inputs[0], &w = c.inputs[1], &b = c.inputs[2], &out = c.outputs[0];
  const bool has_bias = b.ndim >= 0;
  const bool fits = x.dtype == LOOM_DTYPE_FLOAT32 && w.dtype == LOOM_DTYPE_FLOAT32 && out.dtype == LOOM_DTYPE_FLOAT32 &&
                    x.ndim >= 1 && w.ndim == 2 && plugin::is_contiguous(x) && plugin::is_contiguous(w) &&
                    plugin::is_contiguous(out) &&
                    (!has_bias || (b.dtype == LOOM_DTYPE_FLOAT32 && b.ndim == 1 && plugin::is_contiguous(b)));
#if LOOM_CPU_HAVE_ONEDNN
  if (!fits) fail(LOOM_STATUS_UNSUPPORTED, "cpu linear: takes contiguous float32 operands (the composite runs the rest)");
  const int64_t K = w.shape[1], N = w.shape[0];
  const int64_t M = K ? plugin::numel(x) / K : plugin::numel(out) / std::max<int64_t>(N, 1);
  if (M == 0 || N == 0) return;
  float* C = plugin::data_ptr<float>(out);
  if (has_bias) {
    const float* bias = plugin::data_ptr<float>(b);
    for (int64_t m = 0; m < M; ++m) std::memcpy(C + m * N, bias, static_cast<size_t>(N) * sizeof(float));
  }
  gemm_f32(false, true, M, N, K, plugin::data_ptr<float>(x), K, plugin::data_ptr<float>(w), K, has_bias ? 1.0f : 0.0f,
           C, N);
#else
  (void)fits;
  fail(LOOM_STATUS_UNSUPPORTED, "cpu linear: this build has no oneDNN GEMM (the composite runs)");
#endif
}

void register_matmul_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  constexpr uint64_t kMatmulMask = kNoBoolMask;
  r.kernel("matmul", "cpu", kernel<matmul>, kMatmulMask);
  // The core plans mm, bmm and dot exactly as matmul: the same kernel serves them.
  for (const char* op : {"mm", "bmm", "dot"}) r.kernel(op, "cpu", kernel<matmul>, kMatmulMask);
  r.kernel("linear", "cpu", kernel<linear>, LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32));
}

}  // namespace loom::cpu
