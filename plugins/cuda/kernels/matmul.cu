// Matrix products on the GPU (docs/kernel_conventions.md, "matmul"):
// matmul and the ops the core plans exactly like it (mm, bmm, dot), and the
// fused addmm / baddbmm (out = beta * self + alpha * A B, one GEMM with C
// preloaded with self). The products run through gemm_call.hpp's backend:
// cuBLAS, or the plugin's own kernel where no vendor BLAS is built in.
//
// One strided batched call per outer batch index covers the
// innermost batch dim (a batch stride of 0 broadcasts an operand, no copy).
// gemm_plan.hpp decides transposes and leading dimensions; an operand whose
// layout no cuBLAS operand can express (no unit stride, or overlapping
// rows) is first copied to contiguous memory with the shared elementwise
// launcher, keeping its broadcast batch dims broadcast. An output cuBLAS
// cannot write in place is declined, and the core falls back.
//
// float32 (with cuBLAS, TF32 tensor cores only when the plugin option allow_tf32 is on),
// float16 and bfloat16 (float accumulation) and float64. Integer products
// are not registered: they run on the CPU.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "device_blocks.hpp"
#include "dtype.cuh"
#include "gemm_call.hpp"
#include "gemm_plan.hpp"
#include "loops.cuh"
#include "vendor/gpu_target.hpp"

#include <string>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

struct Identity {
  template <class T>
  __device__ T operator()(T x) const { return x; }
};

// x * s in the compute type; s == 0 gives exact zeros, so NaN or inf in x
// (or uninitialised memory) does not leak through, as beta == 0 promises.
template <class T>
struct ScaleBy {
  opmath_t<T> s;
  __device__ T operator()(T x) const { return s == 0 ? narrow<T>(opmath_t<T>(0)) : narrow<T>(widen(x) * s); }
};

// One GEMM operand as the launches read it: its first element and the
// element strides of its (batch..., rows, cols) dims. Points into a staging
// block when the tensor's own layout suits no cuBLAS operand.
struct Operand {
  const char* data;
  const int64_t* shape;
  std::vector<int64_t> strides;

  explicit Operand(const LoomTensorDesc& t)
      : data(plugin::data_ptr<const char>(t)), shape(t.shape), strides(t.strides, t.strides + t.ndim) {}

  gemm::Matrix matrix() const {
    const size_t n = strides.size();
    return {shape[n - 2], shape[n - 1], strides[n - 2], strides[n - 1]};
  }
};

// Copies `t` (described by `op`) to a dense block of `blocks` and points
// `op` at it. Broadcast batch dims (stride 0) stay broadcast: only one copy
// of the matrices they repeat is made.
template <class T>
void make_dense(Operand& op, const LoomTensorDesc& t, Blocks& blocks, cudaStream_t stream, const char* name) {
  const int32_t nd = t.ndim;
  std::vector<int64_t> copy_shape(t.shape, t.shape + nd), dense(static_cast<size_t>(nd));
  for (int32_t d = 0; d < nd - 2; ++d)
    if (t.strides[d] == 0) copy_shape[d] = 1;
  int64_t elems = 1;
  for (int32_t d = nd - 1; d >= 0; --d) {
    dense[d] = elems;
    elems *= copy_shape[d];
  }
  void* block = blocks.get(static_cast<size_t>(elems) * sizeof(T));
  LoomTensorDesc from = t, to = t;
  from.shape = copy_shape.data();
  to.shape = copy_shape.data();
  to.strides = dense.data();
  to.data = block;
  to.byte_offset = 0;
  elementwise<T, T>(to, {&from}, Identity{}, stream, name);
  for (int32_t d = 0; d < nd; ++d) op.strides[d] = copy_shape[d] != t.shape[d] ? 0 : dense[d];
  op.data = static_cast<const char*>(block);
}

// Checks a's / b's shape against out's: [B..., M, K] x [B..., K, N] ->
// [B..., M, N], batch sizes equal or 1.
void check_shapes(const LoomTensorDesc& a, const LoomTensorDesc& b, const LoomTensorDesc& out, const char* op) {
  const int32_t nd = out.ndim;
  const auto fail = [&](const std::string& what) {
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": " + what);
  };
  if (nd < 2 || a.ndim != nd || b.ndim != nd)
    fail("operands need the output's ndim >= 2, got " + std::to_string(a.ndim) + ", " + std::to_string(b.ndim) +
         " and " + std::to_string(nd));
  if (a.dtype != out.dtype || b.dtype != out.dtype)
    fail(std::string("operands must have the output's dtype ") + plugin::dtype_name(out.dtype) + ", got " +
         plugin::dtype_name(a.dtype) + " and " + plugin::dtype_name(b.dtype));
  const int64_t M = out.shape[nd - 2], N = out.shape[nd - 1], K = a.shape[nd - 1];
  if (a.shape[nd - 2] != M || b.shape[nd - 2] != K || b.shape[nd - 1] != N)
    fail("shapes [..., " + std::to_string(a.shape[nd - 2]) + ", " + std::to_string(K) + "] x [..., " +
         std::to_string(b.shape[nd - 2]) + ", " + std::to_string(b.shape[nd - 1]) + "] do not give [..., " +
         std::to_string(M) + ", " + std::to_string(N) + "]");
  for (int32_t d = 0; d < nd - 2; ++d)
    if ((a.shape[d] != out.shape[d] && a.shape[d] != 1) || (b.shape[d] != out.shape[d] && b.shape[d] != 1))
      fail("batch dim " + std::to_string(d) + " has sizes " + std::to_string(a.shape[d]) + " and " +
           std::to_string(b.shape[d]) + ", output " + std::to_string(out.shape[d]));
}

// out = alpha * a b + beta * out over every batch; out already holds what
// beta scales (or beta is 0 and out is not read).
template <class T>
void gemm(const LoomTensorDesc& a, const LoomTensorDesc& b, const LoomTensorDesc& out, double alpha, double beta,
          cudaStream_t stream, const char* op) {
  const int index = out.device.index;
  const int32_t nd = out.ndim;
  Operand x(a), y(b), z(out);
  gemm::Plan p = gemm::plan(x.matrix(), y.matrix(), z.matrix());
  if (!p.c_ok)
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op +
                                               ": the output has no unit stride in its last two dims");
  // Staging blocks, freed (stream-ordered) when the call returns.
  Blocks staging(index, stream);
  if (!p.a_ok) make_dense<T>(x, a, staging, stream, op);
  if (!p.b_ok) make_dense<T>(y, b, staging, stream, op);
  if (!p.a_ok || !p.b_ok) {
    p = gemm::plan(x.matrix(), y.matrix(), z.matrix());
    if (!p.a_ok || !p.b_ok)  // a dense copy is always a valid operand
      throw Failure(LOOM_STATUS_INTERNAL, std::string(LOOM_GPU_NAME " ") + op + ": no BLAS layout for a dense operand");
  }

  gemm::Batches bt;
  gemm::simplify_batches(nd - 2, out.shape, a.shape, x.strides.data(), b.shape, y.strides.data(), z.strides.data(),
                         bt);
  if (bt.numel == 0) return;

  // The innermost batch dim goes to one strided batched call; the outer
  // ones are walked here.
  const int64_t item = static_cast<int64_t>(sizeof(T));
  const int32_t inner = bt.ndim - 1;
  const int64_t count = bt.shape[inner];
  const int64_t sa = bt.strides[gemm::kA][inner], sb = bt.strides[gemm::kB][inner], sc = bt.strides[gemm::kC][inner];
  const int64_t outer_count = bt.numel / count;
  gemm::Call call;
  call.transpose_first = p.first.transpose;
  call.transpose_second = p.second.transpose;
  call.m = p.m;
  call.n = p.n;
  call.k = p.k;
  call.ld_first = p.first.ld;
  call.stride_first = p.swapped ? sb : sa;
  call.ld_second = p.second.ld;
  call.stride_second = p.swapped ? sa : sb;
  call.ldc = p.ldc;
  call.stride_c = sc;
  call.count = count;
  call.alpha = alpha;
  call.beta = beta;
  for (int64_t o = 0; o < outer_count; ++o) {
    int64_t oa = 0, ob = 0, oc = 0, rest = o;
    for (int32_t d = inner - 1; d >= 0; --d) {
      const int64_t i = rest % bt.shape[d];
      rest /= bt.shape[d];
      oa += i * bt.strides[gemm::kA][d];
      ob += i * bt.strides[gemm::kB][d];
      oc += i * bt.strides[gemm::kC][d];
    }
    const char* pa = x.data + oa * item;
    const char* pb = y.data + ob * item;
    call.first = p.swapped ? pb : pa;
    call.second = p.swapped ? pa : pb;
    call.c = const_cast<char*>(z.data) + oc * item;
    gemm::strided_batched<T>(call, stream, index, op);
  }
}

// What every product kernel does once the operands are known: the empty
// and K == 0 cases, then the GEMM. `self` (null for a plain product) is
// copied into out first when beta != 0.
void product(const LoomTensorDesc& a, const LoomTensorDesc& b, const LoomTensorDesc& out,
             const LoomTensorDesc* self, double alpha, double beta, cudaStream_t stream, const char* op) {
  check_shapes(a, b, out, op);
  if (plugin::numel(out) == 0) return;
  use_device(out.device.index);
  visit<DTypes::Floating>(out.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    const bool use_self = self != nullptr && beta != 0;
    if (use_self) elementwise<T, T>(out, {self}, Identity{}, stream, op);
    const int64_t K = a.shape[a.ndim - 1];
    if (K == 0) {  // an empty sum: out = beta * self, or zeros
      const opmath_t<T> s = use_self ? static_cast<opmath_t<T>>(beta) : 0;
      elementwise<T, T>(out, {&out}, ScaleBy<T>{s}, stream, op);
      return;
    }
    gemm<T>(a, b, out, alpha, use_self ? beta : 0.0, stream, op);
  });
}

void expect_call(const LoomKernelCall& c, int32_t inputs, int32_t values, const char* op) {
  if (c.num_inputs < inputs || c.num_outputs < 1 || c.num_values < values)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": expected " + std::to_string(inputs) +
                                                    " inputs, " + std::to_string(values) + " values and an output");
}

template <const char* Name>
void matmul(const LoomKernelCall& c) {
  expect_call(c, 2, 0, Name);
  product(c.inputs[0], c.inputs[1], c.outputs[0], nullptr, 1.0, 0.0, static_cast<cudaStream_t>(c.stream), Name);
}

// addmm / baddbmm: inputs (self broadcast to the output, in its dtype;
// mat1; mat2), values (beta, alpha).
template <const char* Name>
void add_product(const LoomKernelCall& c) {
  expect_call(c, 3, 2, Name);
  const LoomTensorDesc& self = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  bool same_shape = !plugin::is_absent(self) && self.ndim == out.ndim && self.dtype == out.dtype;
  for (int32_t d = 0; same_shape && d < out.ndim; ++d) same_shape = self.shape[d] == out.shape[d];
  if (!same_shape)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  std::string(LOOM_GPU_NAME " ") + Name + ": 'self' must arrive broadcast to the output's shape and dtype");
  const double beta = scalar_as<double>(c.values[0], Name), alpha = scalar_as<double>(c.values[1], Name);
  product(c.inputs[1], c.inputs[2], out, &self, alpha, beta, static_cast<cudaStream_t>(c.stream), Name);
}

constexpr char kMatmul[] = "matmul", kMm[] = "mm", kBmm[] = "bmm", kDot[] = "dot";
constexpr char kAddmm[] = "addmm", kBaddbmm[] = "baddbmm";

}  // namespace

void register_matmul_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  // Floating dtypes only: cuBLAS has no general integer GEMM, so integer
  // products take the CPU fallback without a wasted output allocation here.
  r.kernel("matmul", LOOM_GPU_NAME, kernel<matmul<kMatmul>>, kFloatingMask);
  // The core plans mm, bmm and dot exactly as matmul.
  r.kernel("mm", LOOM_GPU_NAME, kernel<matmul<kMm>>, kFloatingMask);
  r.kernel("bmm", LOOM_GPU_NAME, kernel<matmul<kBmm>>, kFloatingMask);
  r.kernel("dot", LOOM_GPU_NAME, kernel<matmul<kDot>>, kFloatingMask);
  r.kernel("addmm", LOOM_GPU_NAME, kernel<add_product<kAddmm>>, kFloatingMask);
  r.kernel("baddbmm", LOOM_GPU_NAME, kernel<add_product<kBaddbmm>>, kFloatingMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
