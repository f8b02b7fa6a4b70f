// Pooling on CUDA (docs/kernel_conventions.md, "Convolution and pooling"):
// max_pool2d (with or without PyTorch's indices), avg_pool2d and
// adaptive_avg_pool2d over [N, C, H, W] views of any strides.
//
// Own kernels rather than cuDNN's pooling: cuDNN gives no indices, has no
// dilation, derives ceil-mode sizes its own way and divides averages in the
// data type; one thread per output element reading its window covers every
// option in one place, and pooling is bound by memory traffic anyway. The
// window math lives in pool_ops.cuh (checked on the host).
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "dtype.cuh"
#include "int_pair.hpp"
#include "pool_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <algorithm>
#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

constexpr int kThreads = 256;

// Grid-stride loops over the outputs; each element's work is in pool_ops.cuh.
template <class T, bool kIndices>
__global__ void max_pool_kernel(pool::PoolGeometry g, int64_t total, const T* x, T* y, int64_t* indices) {
  for (int64_t o = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; o < total; o += int64_t{gridDim.x} * blockDim.x)
    pool::max_pool_output<T, kIndices>(g, o, x, y, indices);
}

template <class T>
__global__ void avg_pool_kernel(pool::PoolGeometry g, int64_t total, const T* x, T* y, pool::AvgOptions opt) {
  for (int64_t o = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; o < total; o += int64_t{gridDim.x} * blockDim.x)
    pool::avg_pool_output<T>(g, o, x, y, opt);
}

template <class T>
__global__ void adaptive_avg_kernel(pool::PoolGeometry g, int64_t total, const T* x, T* y) {
  for (int64_t o = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; o < total; o += int64_t{gridDim.x} * blockDim.x)
    pool::adaptive_avg_output<T>(g, o, x, y);
}

// Reads the 4-D input and output views; window parameters are set by the
// caller. Indices (outputs[1]) are int64 of the output's shape when present.
pool::PoolGeometry read_geometry(const LoomKernelCall& c, const char* op) {
  if (c.num_inputs < 1 || c.num_outputs < 1)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": expected an input and an output");
  const LoomTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  if (x.ndim != 4 || y.ndim != 4 || x.dtype != y.dtype || x.shape[0] != y.shape[0] || x.shape[1] != y.shape[1])
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  std::string(LOOM_GPU_NAME " ") + op + ": expected 4-D input and output of one dtype with equal N and C, got " +
                      std::to_string(x.ndim) + "-D " + plugin::dtype_name(x.dtype) + " and " +
                      std::to_string(y.ndim) + "-D " + plugin::dtype_name(y.dtype));
  pool::PoolGeometry g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[2], y.shape[3], {}, {}, {}, {}, {}, {}, {}};
  for (int i = 0; i < 4; ++i) {
    g.xs[i] = x.strides[i];
    g.ys[i] = y.strides[i];
  }
  if (c.num_outputs > 1) {
    const LoomTensorDesc& ind = c.outputs[1];
    if (ind.ndim != 4 || ind.dtype != LOOM_DTYPE_INT64)
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": expected 4-D int64 indices");
    for (int i = 0; i < 4; ++i) {
      if (ind.shape[i] != y.shape[i])
        throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": indices and output shapes differ");
      g.is[i] = ind.strides[i];
    }
  }
  for (int i = 0; i < 2; ++i) g.dilation[i] = 1;
  return g;
}

void set_window(pool::PoolGeometry& g, const LoomKernelCall& c, const char* op) {
  const int64_t *k = int_pair(c, 0, op, "kernel_size"), *s = int_pair(c, 1, op, "stride"),
                *p = int_pair(c, 2, op, "padding");
  for (int i = 0; i < 2; ++i) {
    g.kernel[i] = k[i];
    g.stride[i] = s[i];
    g.padding[i] = p[i];
  }
}

// Runs `launch(grid, block, stream)` for the output's elements (none when
// it is empty) on the call's device and stream.
template <class Launch>
void launch_over_outputs(const LoomKernelCall& c, const pool::PoolGeometry& g, const char* op, Launch&& launch) {
  const int64_t total = g.N * g.C * g.OH * g.OW;
  if (total == 0) return;
  const int index = c.outputs[0].device.index;
  use_device(index);
  // A grid-stride loop: enough blocks to fill the device many times over,
  // capped so the block count fits a launch.
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 20);
  launch(static_cast<unsigned>(blocks), static_cast<cudaStream_t>(c.stream), total);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw_cuda(e, index, std::string(op) + " kernel launch");
}

void max_pool2d(const LoomKernelCall& c) {
  const bool indices = c.num_outputs > 1;
  const char* op = indices ? "max_pool2d_with_indices" : "max_pool2d";
  pool::PoolGeometry g = read_geometry(c, op);
  set_window(g, c, op);
  const int64_t* d = int_pair(c, 3, op, "dilation");
  g.dilation[0] = d[0];
  g.dilation[1] = d[1];
  visit<DTypes::Floating>(c.inputs[0].dtype, op, [&](auto tag) {
    using T = decltype(tag);
    const T* x = plugin::data_ptr<const T>(c.inputs[0]);
    T* y = plugin::data_ptr<T>(c.outputs[0]);
    launch_over_outputs(c, g, op, [&](unsigned blocks, cudaStream_t s, int64_t total) {
      if (indices)
        max_pool_kernel<T, true><<<blocks, kThreads, 0, s>>>(g, total, x, y, plugin::data_ptr<int64_t>(c.outputs[1]));
      else
        max_pool_kernel<T, false><<<blocks, kThreads, 0, s>>>(g, total, x, y, nullptr);
    });
  });
}

// values: kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override (INT or absent).
void avg_pool2d(const LoomKernelCall& c) {
  constexpr const char* op = "avg_pool2d";
  pool::PoolGeometry g = read_geometry(c, op);
  set_window(g, c, op);
  if (c.num_values < 6)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " avg_pool2d: expected 6 values, got " + std::to_string(c.num_values));
  const bool has_override = c.values[5].kind == LOOM_VALUE_INT;
  const pool::AvgOptions opt{c.values[4].u.i != 0, has_override, has_override ? c.values[5].u.i : 0};
  if (has_override && opt.divisor_override == 0)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " avg_pool2d: divisor_override must be non-zero");
  visit<DTypes::NoBool>(c.inputs[0].dtype, op, [&](auto tag) {
    using T = decltype(tag);
    const T* x = plugin::data_ptr<const T>(c.inputs[0]);
    T* y = plugin::data_ptr<T>(c.outputs[0]);
    launch_over_outputs(c, g, op, [&](unsigned blocks, cudaStream_t s, int64_t total) {
      avg_pool_kernel<T><<<blocks, kThreads, 0, s>>>(g, total, x, y, opt);
    });
  });
}

void adaptive_avg_pool2d(const LoomKernelCall& c) {
  constexpr const char* op = "adaptive_avg_pool2d";
  const pool::PoolGeometry g = read_geometry(c, op);
  visit<DTypes::Floating>(c.inputs[0].dtype, op, [&](auto tag) {
    using T = decltype(tag);
    const T* x = plugin::data_ptr<const T>(c.inputs[0]);
    T* y = plugin::data_ptr<T>(c.outputs[0]);
    launch_over_outputs(c, g, op, [&](unsigned blocks, cudaStream_t s, int64_t total) {
      adaptive_avg_kernel<T><<<blocks, kThreads, 0, s>>>(g, total, x, y);
    });
  });
}

}  // namespace

void register_pool_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("max_pool2d", LOOM_GPU_NAME, kernel<max_pool2d>, kFloatingMask);
  r.kernel("max_pool2d_with_indices", LOOM_GPU_NAME, kernel<max_pool2d>, kFloatingMask);
  r.kernel("avg_pool2d", LOOM_GPU_NAME, kernel<avg_pool2d>, kNoBoolMask);
  r.kernel("adaptive_avg_pool2d", LOOM_GPU_NAME, kernel<adaptive_avg_pool2d>, kFloatingMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
