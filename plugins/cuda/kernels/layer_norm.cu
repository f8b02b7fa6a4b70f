// layer_norm over the trailing dims on CUDA (docs/kernel_conventions.md,
// "Nn"; the CPU plugin's nn_norm.cpp is the reference).
//
// Registered CONTIGUOUS_ONLY, like the CPU kernel: the core hands over a
// contiguous input (and weight and bias), so a row is N consecutive
// elements and the launch needs no geometry. Each row is read twice: once
// into a Welford state (mean and centred sum of squares together, merged
// across the row's threads), once to write (x - mean) * rstd * w + b.
// Statistics and the affine step run in float for float16/bfloat16/float32
// and in double for float64; the result is rounded once.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "dtype.cuh"
#include "row_reduce.cuh"
#include "vendor/gpu_target.hpp"

#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

// w and b may be null (absent).
template <int RowThreads, class T>
__global__ void layer_norm_rows(const T* x, T* y, const T* w, const T* b, int64_t rows, int64_t n,
                                opmath_t<T> eps) {
  using C = opmath_t<T>;
  const rows::RowGroup<RowThreads> g;
  for (int64_t r = g.first; r < rows; r += g.step) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    rows::Welford<C> st;
    for (int64_t i = g.lane; i < n; i += RowThreads) st.add(widen(xr[i]));
    st = rows::merge_row<RowThreads>(st);
    const C mean = st.mean, rstd = st.rstd(eps);
    for (int64_t i = g.lane; i < n; i += RowThreads) {
      C v = (widen(xr[i]) - mean) * rstd;
      if (w) v *= widen(w[i]);
      if (b) v += widen(b[i]);
      yr[i] = narrow<T>(v);
    }
  }
}

void layer_norm(const LoomKernelCall& c) {
  if (c.num_inputs < 3 || c.num_outputs < 1 || c.num_values < 2)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  LOOM_GPU_NAME " layer_norm: expected (input, weight, bias), (normalized_shape, eps) and an output");
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  if (in.dtype != out.dtype || plugin::numel(in) != plugin::numel(out))
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " layer_norm: output must have the input's dtype and size");
  if (!plugin::is_contiguous(in) || !plugin::is_contiguous(out))
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  LOOM_GPU_NAME " layer_norm: registered CONTIGUOUS_ONLY, got a strided input or output");
  const LoomValue& shape = c.values[0];
  if (shape.kind != LOOM_VALUE_INT_LIST || shape.u.ints.size > in.ndim)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " layer_norm: normalized_shape must be an int list of at most " +
                                                    std::to_string(in.ndim) + " dims");
  int64_t n = 1;
  for (int64_t i = 0; i < shape.u.ints.size; ++i) n *= shape.u.ints.data[i];
  for (int i = 1; i < 3; ++i) {
    const LoomTensorDesc& p = c.inputs[i];
    if (!plugin::is_absent(p) && (plugin::numel(p) != n || p.dtype != in.dtype || !plugin::is_contiguous(p)))
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " layer_norm: ") + (i == 1 ? "weight" : "bias") +
                                                      " must be " + std::to_string(n) + " contiguous elements of dtype " +
                                                      plugin::dtype_name(in.dtype));
  }
  const int64_t total = plugin::numel(in);
  if (total == 0 || n == 0) return;
  const double eps = plugin::value_float(c, 1);
  const int64_t rows = total / n;
  const rows::RowLaunch l = rows::pick_row_launch(rows, n, false);

  const int index = out.device.index;
  use_device(index);
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  visit<DTypes::Floating>(in.dtype, "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* w = plugin::is_absent(c.inputs[1]) ? nullptr : plugin::data_ptr<const T>(c.inputs[1]);
    const T* b = plugin::is_absent(c.inputs[2]) ? nullptr : plugin::data_ptr<const T>(c.inputs[2]);
    rows::with_row_threads(l, [&](auto rt) {
      layer_norm_rows<decltype(rt)::value, T><<<l.grid, l.block, 0, s>>>(
          plugin::data_ptr<const T>(in), plugin::data_ptr<T>(out), w, b, rows, n, static_cast<opmath_t<T>>(eps));
    });
  });
  check(cudaGetLastError(), index, "layer_norm kernel launch");
}

}  // namespace

void register_layer_norm_kernels(plugin::Registrar& r) {
  // Contiguous rows keep every access coalesced; the core copies the rare
  // strided input, as it does for the CPU kernel.
  r.kernel("layer_norm", LOOM_GPU_NAME, plugin::kernel<layer_norm>, kFloatingMask, LOOM_KERNEL_CONTIGUOUS_ONLY);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
