// conv1d / conv2d / conv_transpose2d kernels: read the call the core prepared
// (docs/kernel_conventions.md, "Convolution and pooling": always 4-D views and
// 2-element int lists) into a ConvProblem, then oneDNN or the loops.
#include "common.hpp"
#include "conv.hpp"
#include "kernels.hpp"
#include "pool.hpp"

namespace loom::cpu {
namespace {

const int64_t* pair_value(const LoomKernelCall& c, int i, const char* op, const char* arg) {
  const LoomValue& v = c.values[i];
  if (v.kind != LOOM_VALUE_INT_LIST || v.u.ints.size != 2) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected '%s' as a 2-element int list", op, arg);
  return v.u.ints.data;
}

void expect_4d(const LoomTensorDesc& t, const char* op, const char* what) {
  if (t.ndim != 4) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected a 4-D %s view, got %d-D", op, what, t.ndim);
}

// The sizes, pointers and strides of x [N, C, H, W], w [.., .., kH, kW] and
// y [N, O, OH, OW], and stride / padding / dilation from values at
// (stride_at, stride_at + 1, dil_at) and groups at groups_at.
ConvProblem geometry(const LoomKernelCall& c, const char* op, const LoomTensorDesc& x, const LoomTensorDesc& w,
                     const LoomTensorDesc& y, int stride_at, int dil_at, int groups_at) {
  ConvProblem p;
  p.dtype = x.dtype;
  p.N = x.shape[0];
  p.C = x.shape[1];
  p.H = x.shape[2];
  p.W = x.shape[3];
  p.O = y.shape[1];
  p.kH = w.shape[2];
  p.kW = w.shape[3];
  p.OH = y.shape[2];
  p.OW = y.shape[3];
  p.groups = c.values[groups_at].u.i;
  const int64_t* s = pair_value(c, stride_at, op, "stride");
  const int64_t* pd = pair_value(c, stride_at + 1, op, "padding");
  const int64_t* d = pair_value(c, dil_at, op, "dilation");
  for (int i = 0; i < 2; ++i) {
    p.stride[i] = s[i];
    p.pad[i] = pd[i];
    p.dil[i] = d[i];
  }
  p.x = plugin::data_ptr<char>(x);
  p.w = plugin::data_ptr<char>(w);
  p.y = plugin::data_ptr<char>(y);
  for (int i = 0; i < 4; ++i) {
    p.xs[i] = x.strides[i];
    p.ws[i] = w.strides[i];
    p.ys[i] = y.strides[i];
  }
  return p;
}

// stride_at..: value positions of stride, padding, dilation; groups_at: groups.
ConvProblem read_problem(const LoomKernelCall& c, const char* op, bool transposed, int dil_at,
                         int groups_at) {
  expect_arity(c, op, 3, 1);
  expect_values(c, op, transposed ? 5 : 4);
  const LoomTensorDesc &x = c.inputs[0], &w = c.inputs[1], &b = c.inputs[2], &y = c.outputs[0];
  expect_4d(x, op, "input");
  expect_4d(w, op, "weight");
  expect_4d(y, op, "output");
  if (w.dtype != x.dtype || y.dtype != x.dtype || (b.ndim >= 0 && b.dtype != x.dtype)) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: input, weight, bias and output must share a dtype", op);
  ConvProblem p = geometry(c, op, x, w, y, 0, dil_at, groups_at);
  p.transposed = transposed;
  const int64_t wc = transposed ? w.shape[0] : w.shape[1] * p.groups;
  if (y.shape[0] != p.N || wc != p.C || p.groups <= 0 || p.O % p.groups || p.C % p.groups) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: inconsistent shapes or groups", op);
  if (b.ndim >= 0) {
    if (b.ndim != 1 || b.shape[0] != p.O) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected bias of size [%lld]", op,
           static_cast<long long>(p.O));
    p.b = plugin::data_ptr<char>(b);
    p.bs = b.strides[0];
  }
  return p;
}

// The gradient ops (_conv2d_backward_input / _weight): inputs (grad_output,
// weight or input), output the gradient; values (size, stride, padding,
// dilation, groups). Sizes come from the views: the core checked they fit.
ConvProblem read_backward_problem(const LoomKernelCall& c, ConvPass pass) {
  const char* op = pass == ConvPass::BackwardData ? "_conv2d_backward_input" : "_conv2d_backward_weight";
  expect_arity(c, op, 2, 1);
  expect_values(c, op, 5);
  const LoomTensorDesc &dy = c.inputs[0], &other = c.inputs[1], &out = c.outputs[0];
  expect_4d(dy, op, "grad_output");
  expect_4d(other, op, pass == ConvPass::BackwardData ? "weight" : "input");
  expect_4d(out, op, "output");
  if (other.dtype != dy.dtype || out.dtype != dy.dtype) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: grad_output, its partner and the output must share a dtype", op);
  const LoomTensorDesc& x = pass == ConvPass::BackwardData ? out : other;
  const LoomTensorDesc& w = pass == ConvPass::BackwardData ? other : out;
  ConvProblem p = geometry(c, op, x, w, dy, 1, 3, 4);
  p.pass = pass;
  if (dy.shape[0] != p.N || w.shape[0] != p.O || p.groups <= 0 || p.O % p.groups || w.shape[1] * p.groups != p.C)
      [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: inconsistent shapes or groups", op);
  return p;
}

void run(const ConvProblem& p) {
  if (p.N * p.O * p.OH * p.OW == 0) return;
#if LOOM_CPU_HAVE_ONEDNN
  if (p.C > 0 && conv_onednn(p)) return;
#endif
  conv_loop(p);
}

// conv1d and conv2d share it: the core hands conv1d over as height 1.
void conv_forward(const LoomKernelCall& c) { run(read_problem(c, "conv2d", false, 2, 3)); }
void conv_transposed(const LoomKernelCall& c) {
  run(read_problem(c, "conv_transpose2d", true, 4, 3));
}

#if LOOM_CPU_HAVE_ONEDNN
// oneDNN's backward primitives, or UNSUPPORTED so the core runs the op's
// composite (the adjoint as forward convolutions, which the loops cover):
// empty problems, dtypes and shapes oneDNN has only its reference loop for.
template <ConvPass Pass>
void conv_backward(const LoomKernelCall& c) {
  const ConvProblem p = read_backward_problem(c, Pass);
  if (p.N * p.C * p.O * p.OH * p.OW == 0 || !conv_onednn(p))
    fail(LOOM_STATUS_UNSUPPORTED, "cpu %s: no oneDNN primitive for this problem",
         Pass == ConvPass::BackwardData ? "_conv2d_backward_input" : "_conv2d_backward_weight");
}
#endif

}  // namespace

void register_conv_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("conv1d", "cpu", kernel<conv_forward>, kNoBoolMask);
  r.kernel("conv2d", "cpu", kernel<conv_forward>, kNoBoolMask);
  r.kernel("conv_transpose2d", "cpu", kernel<conv_transposed>, kNoBoolMask);
#if LOOM_CPU_HAVE_ONEDNN
  constexpr uint64_t kOneDnnMask = LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32) | LOOM_DTYPE_BIT(LOOM_DTYPE_BFLOAT16);
  r.kernel("_conv2d_backward_input", "cpu", kernel<conv_backward<ConvPass::BackwardData>>, kOneDnnMask);
  r.kernel("_conv2d_backward_weight", "cpu", kernel<conv_backward<ConvPass::BackwardWeights>>, kOneDnnMask);
#endif
}

}  // namespace loom::cpu
