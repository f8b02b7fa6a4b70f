// Convolutions with the plugin's own kernels, built where no vendor
// convolution library (cuDNN / MIOpen) is built in, e.g. the HIP build:
// the same five ops and passes as conv_cudnn.cu (docs/kernel_conventions.md,
// "Convolution and pooling"; conv_call.hpp maps each op onto one pass).
//
// Direct loops, one thread per written element for Forward and BackwardData
// (a gather, no atomics) and one block per weight element for
// BackwardFilter, its threads splitting the (n, oh, ow) sum and adding up in
// shared memory. The per-element math is conv_direct_ops.cuh (checked on the
// host). Performance is not cuDNN's: no tiling, no tensor cores, no
// algorithm choice; it is there so convolutions run on the device at all.
// In exchange it takes every layout as it is (no packed filters, no copies,
// 64-bit offsets) and writes zeros (or the bias) for empty sums, which
// cuDNN leaves to the CPU. The bias is the sum's starting value, so it
// costs no extra pass.
//
// float16 / bfloat16 (float accumulation), float32 and float64; integer
// convolutions are not registered: they run on the CPU.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "conv_call.hpp"
#include "conv_direct_ops.cuh"
#include "conv_kernel.cuh"
#include "conv_plan.hpp"
#include "dtype.cuh"
#include "geometry.cuh"
#include "vendor/gpu_target.hpp"

#include <algorithm>
#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;
using conv::Bias;
using conv::Pass;
using conv::Problem;

// Threads of a backward-filter block at most: a power of two (the tree
// reduction halves it) and a multiple of 32 (whole warps, whatever the
// warp size: the reduction uses __syncthreads only, no shuffles).
constexpr unsigned kFilterThreads = 256;

// Grid-stride loops over the written elements.
template <class T>
__global__ void forward_kernel(Problem p, int64_t total, const T* x, const T* w, Bias<T> bias, T* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x)
    conv::forward_element(p, i, x, w, bias, y);
}

template <class T>
__global__ void backward_data_kernel(Problem p, int64_t total, const T* y, const T* w, Bias<T> bias, T* x) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x)
    conv::backward_data_element(p, i, y, w, bias, x);
}

// One weight element per block (a grid-stride loop over blocks): thread t
// sums terms t, t + blockDim, ..., then the block halves its partial sums
// in shared memory. blockDim is a power of two <= kFilterThreads.
template <class T>
__global__ void backward_filter_kernel(Problem p, int64_t total, const T* x, const T* y, T* w) {
  __shared__ opmath_t<T> partial[kFilterThreads];
  const int64_t terms = conv::backward_filter_terms(p);
  for (int64_t i = blockIdx.x; i < total; i += gridDim.x) {
    partial[threadIdx.x] = conv::backward_filter_partial(p, i, x, y, threadIdx.x, terms, blockDim.x);
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
      __syncthreads();
    }
    // Only thread 0 reads partial[0], which only it writes in the next
    // element's first step: no barrier is needed before that step.
    if (threadIdx.x == 0) w[conv::offset_of(p.w, conv::unflatten(p.w, i))] = narrow<T>(partial[0]);
  }
}

// Threads for a sum of `terms`: the smallest power of two covering it, from
// one warp to kFilterThreads (short sums leave no idle half-blocks).
unsigned filter_threads(int64_t terms) {
  unsigned threads = 32;
  while (threads < kFilterThreads && threads < terms) threads *= 2;
  return threads;
}

// Whether a dim of the written operand repeats elements (stride 0): its
// threads would race on one element.
bool has_broadcast_dim(const conv::Dims4& t) {
  for (int i = 0; i < 4; ++i)
    if (t.size[i] > 1 && t.stride[i] == 0) return true;
  return false;
}

template <class T>
void run(const LoomKernelCall& c, const conv::Call& k) {
  const Problem& p = k.problem;
  const int index = c.outputs[0].device.index;
  const cudaStream_t stream = static_cast<cudaStream_t>(c.stream);
  use_device(index);
  const Bias<T> bias{k.bias == nullptr ? nullptr : plugin::data_ptr<const T>(*k.bias),
                     k.bias == nullptr ? 0 : k.bias->strides[0]};
  const T* w_in = static_cast<const T*>(k.w.data);
  if (p.pass == Pass::Forward) {
    const int64_t total = conv::numel4(p.y);
    forward_kernel<T><<<grid_for(total), kBlock, 0, stream>>>(p, total, static_cast<const T*>(k.x.data), w_in, bias,
                                                              static_cast<T*>(k.y.data));
  } else if (p.pass == Pass::BackwardData) {
    const int64_t total = conv::numel4(p.x);
    backward_data_kernel<T><<<grid_for(total), kBlock, 0, stream>>>(p, total, static_cast<const T*>(k.y.data), w_in,
                                                                    bias, static_cast<T*>(k.x.data));
  } else {
    const int64_t total = conv::numel4(p.w);
    // As many blocks as grid_for allows a launch (the kernel loops past it).
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(total, 65535 * 8));
    backward_filter_kernel<T><<<blocks, filter_threads(conv::backward_filter_terms(p)), 0, stream>>>(
        p, total, static_cast<const T*>(k.x.data), static_cast<const T*>(k.y.data), static_cast<T*>(k.w.data));
  }
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw_cuda(e, index, std::string(k.op) + " kernel launch");
}

// A call of the family with something to write (conv_kernel.cuh's serve
// reads it). Shapes that make no convolution are declined (UNSUPPORTED: the
// core falls back, and its checks say what is wrong); an empty sum is run
// (zeros or bias).
void run_call(const LoomKernelCall& c, const conv::Call& k) {
  if (const char* why = conv::shape_problem(k.problem))
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + k.op + ": " + why);
  conv::check_bias(k);
  const Pass pass = k.problem.pass;
  if (has_broadcast_dim(pass == Pass::Forward ? k.y.dims : pass == Pass::BackwardData ? k.x.dims : k.w.dims))
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + k.op + ": the output has broadcast dims");
  visit<DTypes::Floating>(k.problem.dtype, k.op, [&](auto tag) { run<decltype(tag)>(c, k); });
}

}  // namespace

void register_conv_kernels(plugin::Registrar& r) { conv::register_family<run_call>(r); }

}  // namespace loom::LOOM_GPU_NAMESPACE
