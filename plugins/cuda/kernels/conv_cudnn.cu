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
#include "conv_plan.hpp"
#include "cudnn_conv.hpp"
#include "device_blocks.hpp"
#include "dtype.cuh"
#include "loops.cuh"

#include <cudnn.h>

#include <string>
#include <vector>

namespace loom::cuda {
namespace {

using plugin::Failure;
using conv::Dims4;
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

// One operand in device memory: where it starts and its 4-D layout.
struct Operand {
  void* data;
  Dims4 dims;
};

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

// Runs one pass: the written operand (y, x or w by pass) is overwritten.
// `bias`, when given ([O], any stride), is added to the pass's output
// channels afterwards (Forward: y; BackwardData as conv_transpose2d: x).
template <class T>
void run(const LoomKernelCall& c, const char* op, Problem p, Operand x, Operand w, Operand y, const LoomTensorDesc* bias) {
  p.x = x.dims;
  p.w = w.dims;
  p.y = y.dims;
  if (const char* why = conv::decline_reason(p))
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string("cuda ") + op + ": not run by cuDNN: " + why);
  const int64_t channels = p.pass == Pass::Forward ? y.dims.size[1] : x.dims.size[1];
  if (bias != nullptr && (bias->ndim != 1 || bias->shape[0] != channels))
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  std::string("cuda ") + op + ": expected a bias of size [" + std::to_string(channels) + "]");
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
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string("cuda ") + op + ": the output has broadcast or reversed dims");
  conv::FilterLayout layout = conv::filter_layout(w.dims);
  if (layout == conv::FilterLayout::None) {
    if (written == &w)
      throw Failure(LOOM_STATUS_UNSUPPORTED, std::string("cuda ") + op + ": the weight gradient is not packed");
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

int64_t numel4(const Dims4& t) { return t.size[0] * t.size[1] * t.size[2] * t.size[3]; }
Dims4 dims_of_output(const LoomKernelCall& c) { return conv::dims_of(c.outputs[0]); }

// A problem with nothing to sum over (an empty input channel or batch
// dimension) still has to write zeros or the bias: rare, left to the CPU.
[[noreturn]] void decline_empty(const char* op) {
  throw Failure(LOOM_STATUS_UNSUPPORTED, std::string("cuda ") + op + ": empty reduction, not run by cuDNN");
}

// One op of the family (conv_call.hpp says which tensor is which).
template <conv::ConvOp kOp>
void convolution(const LoomKernelCall& c) {
  constexpr conv::OpLayout l = conv::layout_of(kOp);
  const Problem p = conv::read_problem(c, kOp);
  const Operand x{plugin::data_ptr<void>(conv::tensor_at(c, l.x)), p.x};
  const Operand w{plugin::data_ptr<void>(conv::tensor_at(c, l.w)), p.w};
  const Operand y{plugin::data_ptr<void>(conv::tensor_at(c, l.y)), p.y};
  if (numel4(dims_of_output(c)) == 0) return;
  if (numel4(p.x) == 0 || numel4(p.w) == 0 || numel4(p.y) == 0) decline_empty(l.name);
  const bool has_bias = l.inputs == 3 && !plugin::is_absent(c.inputs[2]);
  visit<DTypes::Floating>(p.dtype, l.name, [&](auto tag) {
    run<decltype(tag)>(c, l.name, p, x, w, y, has_bias ? &c.inputs[2] : nullptr);
  });
}

}  // namespace

void register_conv_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  using conv::ConvOp;
  // conv1d arrives as conv2d with height 1.
  r.kernel("conv1d", "cuda", kernel<convolution<ConvOp::Conv2d>>, kFloatingMask);
  r.kernel("conv2d", "cuda", kernel<convolution<ConvOp::Conv2d>>, kFloatingMask);
  r.kernel("conv_transpose2d", "cuda", kernel<convolution<ConvOp::ConvTranspose2d>>, kFloatingMask);
  r.kernel("_conv2d_backward_input", "cuda", kernel<convolution<ConvOp::BackwardInput>>, kFloatingMask);
  r.kernel("_conv2d_backward_weight", "cuda", kernel<convolution<ConvOp::BackwardWeight>>, kFloatingMask);
}

}  // namespace loom::cuda
