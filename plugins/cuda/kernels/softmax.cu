// softmax and log_softmax along one dim on CUDA (docs/kernel_conventions.md,
// "Nn"; the CPU plugin's nn_softmax.cpp is the reference).
//
// The input arrives already in the result dtype (the core applied the
// `dtype` argument), with any strides. A "row" is the line of elements
// along `dim`; the other dims are simplified into a Geometry so any layout
// reaches a row's first element by one offsets() call. Each row is read
// twice: once to fold every element into an OnlineSoftmax (max and
// rescaled sum together), once to write the result. Rows go to a thread,
// a warp or a block (row_reduce.cuh). float16/bfloat16 compute in float.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "dtype.cuh"
#include "geometry.cuh"
#include "row_reduce.cuh"
#include "vendor/gpu_target.hpp"

#include <string>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

// `rows` walks the other dims (operand 0: input, 1: output); a row's
// elements are sx / sy apart.
template <int RowThreads, bool Log, class T>
__global__ void softmax_rows(const T* x, T* y, Geometry<2> rows, int64_t n, int64_t sx, int64_t sy) {
  using C = opmath_t<T>;
  const rows::RowGroup<RowThreads> g;
  for (int64_t r = g.first; r < rows.numel; r += g.step) {
    int64_t off[2];
    rows.offsets(r, off);
    const T* xr = x + off[0];
    T* yr = y + off[1];
    rows::OnlineSoftmax<C> st;
    for (int64_t i = g.lane; i < n; i += RowThreads) st.add(widen(xr[i * sx]));
    st = rows::merge_row<RowThreads>(st);
    for (int64_t i = g.lane; i < n; i += RowThreads) {
      const C v = widen(xr[i * sx]);
      yr[i * sy] = narrow<T>(Log ? st.log_softmax(v) : st.softmax(v));
    }
  }
}

template <bool Log>
void softmax_kernel(const LoomKernelCall& c, const char* op) {
  if (c.num_inputs < 1 || c.num_outputs < 1 || c.num_values < 1)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": expected (self, dim) and an output");
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  if (in.ndim != out.ndim || in.dtype != out.dtype)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  std::string(LOOM_GPU_NAME " ") + op + ": output must have the input's ndim and dtype");
  for (int32_t d = 0; d < in.ndim; ++d)
    if (in.shape[d] != out.shape[d])
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": output shape differs at dim " +
                                                      std::to_string(d));
  const int64_t dim = plugin::value_int(c, 0);
  if (dim < 0 || dim >= in.ndim)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": dim " + std::to_string(dim) +
                                                    " out of range for a " + std::to_string(in.ndim) + "-d tensor");
  if (plugin::numel(in) == 0) return;

  // The other dims: every dim but `dim`, with both operands' strides.
  std::vector<int64_t> shape, sx, sy;
  for (int32_t d = 0; d < in.ndim; ++d) {
    if (d == dim) continue;
    shape.push_back(in.shape[d]);
    sx.push_back(in.strides[d]);
    sy.push_back(out.strides[d]);
  }
  const int64_t* strides[2] = {sx.data(), sy.data()};
  Geometry<2> g;
  if (!make_geometry<2>(static_cast<int32_t>(shape.size()), shape.data(), strides, g))
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": more than 12 non-mergeable dims");
  const int64_t n = in.shape[dim], step_x = in.strides[dim], step_y = out.strides[dim];
  const rows::RowLaunch l = rows::pick_row_launch(g.numel, n, step_x != 1 && n > 1);

  const int index = out.device.index;
  use_device(index);
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  visit<DTypes::Floating>(in.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    rows::with_row_threads(l, [&](auto rt) {
      softmax_rows<decltype(rt)::value, Log, T><<<l.grid, l.block, 0, s>>>(
          plugin::data_ptr<const T>(in), plugin::data_ptr<T>(out), g, n, step_x, step_y);
    });
  });
  check(cudaGetLastError(), index, Log ? "log_softmax kernel launch" : "softmax kernel launch");
}

void softmax(const LoomKernelCall& c) { softmax_kernel<false>(c, "softmax"); }
void log_softmax(const LoomKernelCall& c) { softmax_kernel<true>(c, "log_softmax"); }

}  // namespace

void register_softmax_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("softmax", LOOM_GPU_NAME, kernel<softmax>, kFloatingMask);
  r.kernel("log_softmax", LOOM_GPU_NAME, kernel<log_softmax>, kFloatingMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
