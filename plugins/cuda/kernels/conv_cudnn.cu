// Convolutions on CUDA through cuDNN's legacy API (docs/kernel_conventions.md,
// "Convolution and pooling"): conv1d / conv2d (forward), conv_transpose2d
// (cuDNN's backward data is its forward), _conv2d_backward_input (backward
// data) and _conv2d_backward_weight (backward filter).
//
// conv_call.hpp maps each op onto one pass of a forward convolution and
// conv_plan.hpp says when cuDNN cannot express it (then LOOM_STATUS_UNSUPPORTED: the core falls
// back). Tensors go to cuDNN with their own strides; filters, which cuDNN
// only takes packed (NCHW or NHWC), and operands with broadcast dims are
// copied to contiguous blocks first. The algorithm comes from cuDNN's
// heuristics (the *_v7 queries, no benchmarking), cached per shape; its
// workspace is a block of the caching allocator, freed when the call
// returns (stream-ordered: reused on this stream only after the work
// queued here).
//
// float16 / bfloat16 (float accumulation, tensor cores), float32 (TF32
// tensor cores only with the plugin option allow_tf32, as matmul) and
// float64. Integer convolutions are not registered: they run on the CPU.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "conv_call.hpp"
#include "conv_kernel.cuh"
#include "conv_plan.hpp"
#include "cudnn_conv.hpp"
#include "device_blocks.hpp"
#include "dtype.cuh"
#include "loops.cuh"
#include "vendor/gpu_target.hpp"

#include <cudnn.h>

#include <string>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;
using conv::Operand;
using conv::Pass;
using conv::Problem;

struct Identity {
  template <class T>
  __device__ T operator()(T x) const { return x; }
};

// a + b rounded once from the compute type.
struct AddInCompute {
  template <class T>
  __device__ T operator()(T a, T b) const { return narrow<T>(widen(a) + widen(b)); }
};

// The math cuDNN may use. float32 without allow_tf32 is FMA only: cuDNN's
// default math lets it pick TF32 tensor-core kernels on Ampere and later.
template <class T>
cudnnMathType_t math_type() {
  if constexpr (is_half_v<T>) return CUDNN_TENSOR_OP_MATH;
  else if constexpr (std::is_same_v<T, float>)
    return options().allow_tf32.load(std::memory_order_relaxed) ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  else return CUDNN_DEFAULT_MATH;
}

// A contiguous copy of `o` in a block of `blocks` (for inputs cuDNN cannot
// read as they are).
template <class T>
Operand contiguous_copy(const Operand& o, Blocks& blocks, cudaStream_t stream, const char* op) {
  Operand dense{nullptr, o.dims};
  int64_t elems = 1;
  for (int i = 3; i >= 0; --i) {
    dense.dims.stride[i] = elems;
    elems *= o.dims.size[i];
  }
  dense.data = blocks.get(static_cast<size_t>(elems) * sizeof(T));
  LoomTensorDesc from{}, to{};
  from.ndim = to.ndim = 4;
  from.shape = to.shape = o.dims.size;
  from.strides = o.dims.stride;
  to.strides = dense.dims.stride;
  from.data = o.data;
  to.data = dense.data;
  elementwise<T, T>(to, {&from}, Identity{}, stream, op);
  return dense;
}

// Runs the call's pass: the written operand (y, x or w by pass) is
// overwritten. The bias, when given ([channels], any stride), is added to
// the pass's output channels afterwards (Forward: y; BackwardData as
// conv_transpose2d: x).
template <class T>
void run(const LoomKernelCall& c, const conv::Call& k) {
  const char* op = k.op;
  Problem p = k.problem;
  Operand x = k.x, w = k.w, y = k.y;
  const LoomTensorDesc* bias = k.bias;
  if (const char* why = conv::decline_reason(p))
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": not run by cuDNN: " + why);
  conv::check_bias(k);
  const int index = c.outputs[0].device.index;
  const cudaStream_t stream = static_cast<cudaStream_t>(c.stream);
  use_device(index);
  Blocks blocks(index, stream);
  // Inputs cuDNN cannot read as they are become contiguous copies; the
  // written operand must already suit it.
  Operand* written = p.pass == Pass::Forward ? &y : p.pass == Pass::BackwardData ? &x : &w;
  for (Operand* o : {&x, &y})
    if (o != written && !conv::readable_as_strided(o->dims)) *o = contiguous_copy<T>(*o, blocks, stream, op);
  if (!conv::readable_as_strided(written->dims))
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": the output has broadcast or reversed dims");
  conv::FilterLayout layout = conv::filter_layout(w.dims);
  if (layout == conv::FilterLayout::None) {
    if (written == &w)
      throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": the weight gradient is not packed");
    w = contiguous_copy<T>(w, blocks, stream, op);
    layout = conv::FilterLayout::NCHW;
  }
  p.x = x.dims;
  p.w = w.dims;
  p.y = y.dims;

  const cudnnDataType_t type = cudnn_data_type<T>();
  ConvDescriptors d(index);
  set_tensor(d.x, x.dims, type, index);
  set_tensor(d.y, y.dims, type, index);
  set_filter(d.w, w.dims, layout, type, index);
  check_cudnn(cudnnSetConvolution2dDescriptor(
                  d.conv.get(), static_cast<int>(p.padding[0]), static_cast<int>(p.padding[1]),
                  static_cast<int>(p.stride[0]), static_cast<int>(p.stride[1]), static_cast<int>(p.dilation[0]),
                  static_cast<int>(p.dilation[1]), CUDNN_CROSS_CORRELATION,
                  std::is_same_v<T, double> ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT),
              index, "cudnnSetConvolution2dDescriptor");
  check_cudnn(cudnnSetConvolutionGroupCount(d.conv.get(), static_cast<int>(p.groups)), index,
              "cudnnSetConvolutionGroupCount");
  const cudnnMathType_t wanted = math_type<T>();
  check_cudnn(cudnnSetConvolutionMathType(d.conv.get(), wanted), index, "cudnnSetConvolutionMathType");

  const cudnnHandle_t h = cudnn_handle(index, stream);
  const auto plan = conv_algorithm(d, h, p, wanted, index, op);
  check_cudnn(cudnnSetConvolutionMathType(d.conv.get(), plan->math), index, "cudnnSetConvolutionMathType");
  void* workspace = blocks.get(plan->workspace);

  const cudnn_scale_t<T> one = 1, zero = 0;
  if (p.pass == Pass::Forward)
    check_cudnn(cudnnConvolutionForward(h, &one, d.x.get(), x.data, d.w.get(), w.data, d.conv.get(),
                                        static_cast<cudnnConvolutionFwdAlgo_t>(plan->algo), workspace,
                                        plan->workspace, &zero, d.y.get(), y.data),
                index, "cudnnConvolutionForward");
  else if (p.pass == Pass::BackwardData)
    check_cudnn(cudnnConvolutionBackwardData(h, &one, d.w.get(), w.data, d.y.get(), y.data, d.conv.get(),
                                             static_cast<cudnnConvolutionBwdDataAlgo_t>(plan->algo), workspace,
                                             plan->workspace, &zero, d.x.get(), x.data),
                index, "cudnnConvolutionBackwardData");
  else
    check_cudnn(cudnnConvolutionBackwardFilter(h, &one, d.x.get(), x.data, d.y.get(), y.data, d.conv.get(),
                                               static_cast<cudnnConvolutionBwdFilterAlgo_t>(plan->algo), workspace,
                                               plan->workspace, &zero, d.w.get(), w.data),
                index, "cudnnConvolutionBackwardFilter");
  if (bias == nullptr) return;

  // out += bias, the bias broadcast as [1, O, 1, 1] (stride 0 where it
  // repeats). An own elementwise pass rather than cudnnAddTensor, whose
  // dtype and stride support is narrower (bfloat16 is not in its list). Each element is read and
  // written by one thread, so the output may be an input.
  const int64_t zero_strides[4] = {0, bias->strides[0], 0, 0};
  LoomTensorDesc out = c.outputs[0], broadcast_bias = *bias;
  broadcast_bias.ndim = 4;
  broadcast_bias.shape = out.shape;
  broadcast_bias.strides = zero_strides;
  elementwise<T, T, T>(out, {&out, &broadcast_bias}, AddInCompute{}, stream, op);
}

// A problem with nothing to sum over (an empty input channel or batch
// dimension) still has to write zeros or the bias: rare, left to the CPU.
[[noreturn]] void decline_empty(const char* op) {
  throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": empty reduction, not run by cuDNN");
}

// A call of the family with something to write (conv_kernel.cuh's serve
// reads it).
void run_call(const LoomKernelCall& c, const conv::Call& k) {
  if (k.reduction_empty) decline_empty(k.op);
  visit<DTypes::Floating>(k.problem.dtype, k.op, [&](auto tag) { run<decltype(tag)>(c, k); });
}

}  // namespace

void register_conv_kernels(plugin::Registrar& r) { conv::register_family<run_call>(r); }

}  // namespace loom::LOOM_GPU_NAMESPACE
