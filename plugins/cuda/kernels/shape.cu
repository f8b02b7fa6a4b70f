// Shape kernels on CUDA that only move elements, matching the CPU plugin
// (plugins/cpu/shape_kernels.cpp; contracts in docs/kernel_conventions.md,
// "Shape"): cat, flip, roll, tril/triu and tril_/triu_. Moving an element
// needs only its width, never its dtype (zero is all-zero bytes in every
// dtype), so each kernel is instantiated once per width and takes every dtype.
#include "elementwise_args.hpp"
#include "geometry.cuh"
#include "index_shape.hpp"
#include "indexing_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <vector>

namespace loom::LOOM_GPU_NAMESPACE::indexing {
namespace {

// ------------------------------------------------------------------ cat ---

// Operand 0: the output slice, 1: the input.
template <class W>
__global__ void move_kernel(W* dst, const W* src, Geometry<2> g) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[2];
    g.offsets(i, off);
    dst[off[0]] = src[off[1]];
  }
}

// values[0]: TENSOR_LIST (u.i = n inputs), values[1]: the dim. One launch
// per non-empty input, into the output slice starting at the sizes before it.
void cat(const LoomKernelCall& c) {
  const int64_t n = ew::value_at(c, "cat", 0).u.i;
  const int64_t d = ew::value_at(c, "cat", 1).u.i;
  ew::expect_arity(c, "cat", static_cast<int32_t>(n), 1);
  const LoomTensorDesc& out = c.outputs[0];
  if (d < 0 || d >= out.ndim) [[unlikely]]
    fail_op("cat", "dim " + std::to_string(d) + " out of range for " + std::to_string(out.ndim) + " dims");
  // Every input checked before any is copied: a failing call writes nothing.
  for (int64_t i = 0; i < n; ++i) {
    const LoomTensorDesc& in = c.inputs[i];
    if (in.dtype != out.dtype || in.ndim != out.ndim) [[unlikely]]
      fail_op("cat", "input " + std::to_string(i) + " has dtype " + plugin::dtype_name(in.dtype) + " and " +
                         std::to_string(in.ndim) + " dims, the output " + plugin::dtype_name(out.dtype) + " and " +
                         std::to_string(out.ndim));
  }
  const cudaStream_t s = ew::enter(c);
  visit_width(out.dtype, "cat", [&](auto w) {
    using W = decltype(w);
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
      const LoomTensorDesc& in = c.inputs[i];
      const int64_t* strides[2] = {out.strides, in.strides};
      Geometry<2> g;
      if (!make_geometry<2>(in.ndim, in.shape, strides, g))
        throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME " cat: more than 12 non-mergeable dims");
      if (g.numel > 0)
        move_kernel<<<grid_for(g.numel), kBlock, 0, s>>>(plugin::data_ptr<W>(out) + at * out.strides[d],
                                                         plugin::data_ptr<const W>(in), g);
      at += in.shape[d];
    }
  });
  check_launch(out.device.index, "cat");
}

// ----------------------------------------------------------- flip, roll ---

// Per dim of the output: its size, both operands' strides, and the map from
// output to input index (a flip, a roll by `shift`, or the identity).
struct DimMap {
  int32_t ndim;
  int64_t numel;
  int64_t shape[kMaxKernelDims];
  int64_t in_strides[kMaxKernelDims];
  int64_t out_strides[kMaxKernelDims];
  int64_t shift[kMaxKernelDims];
  bool flip[kMaxKernelDims];
};

DimMap make_map(const LoomTensorDesc& in, const LoomTensorDesc& out, const char* op) {
  if (out.ndim > kMaxKernelDims) [[unlikely]]
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": more than 12 dims");
  DimMap m{};
  m.ndim = out.ndim;
  m.numel = plugin::numel(out);
  for (int32_t d = 0; d < out.ndim; ++d) {
    m.shape[d] = out.shape[d];
    m.in_strides[d] = in.strides[d];
    m.out_strides[d] = out.strides[d];
  }
  return m;
}

template <class W>
__global__ void remap_kernel(W* out, const W* in, DimMap m) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < m.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, ioff = 0, ooff = 0;
    for (int32_t d = m.ndim - 1; d >= 0; --d) {
      const int64_t n = m.shape[d], q = rest / n, o = rest - q * n;
      rest = q;
      int64_t j = m.flip[d] ? flip_source(o, n) : o;
      if (m.shift[d] != 0) j = roll_source(j, m.shift[d], n);
      ioff += j * m.in_strides[d];
      ooff += o * m.out_strides[d];
    }
    out[ooff] = in[ioff];
  }
}

void run_remap(const LoomKernelCall& c, const char* op, const DimMap& m) {
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  if (m.numel == 0) return;
  const cudaStream_t s = ew::enter(c);
  visit_width(out.dtype, op, [&](auto w) {
    using W = decltype(w);
    remap_kernel<<<grid_for(m.numel), kBlock, 0, s>>>(plugin::data_ptr<W>(out), plugin::data_ptr<const W>(in), m);
  });
  check_launch(out.device.index, op);
}

// values[0]: INT_LIST of flipped dims.
void flip(const LoomKernelCall& c) {
  ew::expect_arity(c, "flip", 1, 1);
  const LoomTensorDesc& out = c.outputs[0];
  ew::expect_like(c.inputs[0], out, "flip");
  DimMap m = make_map(c.inputs[0], out, "flip");
  const LoomValue& dims = ew::value_at(c, "flip", 0);
  for (int64_t i = 0; i < dims.u.ints.size; ++i) {
    const int64_t d = dims.u.ints.data[i];
    if (d < 0 || d >= out.ndim) [[unlikely]]
      fail_op("flip", "dim " + std::to_string(d) + " out of range for " + std::to_string(out.ndim) + " dims");
    m.flip[d] = true;
  }
  run_remap(c, "flip", m);
}

// values[0]: INT_LIST with one shift per dim, each in [0, size).
void roll(const LoomKernelCall& c) {
  ew::expect_arity(c, "roll", 1, 1);
  const LoomTensorDesc& out = c.outputs[0];
  ew::expect_like(c.inputs[0], out, "roll");
  DimMap m = make_map(c.inputs[0], out, "roll");
  const LoomValue& shifts = ew::value_at(c, "roll", 0);
  if (shifts.u.ints.size != out.ndim) [[unlikely]]
    fail_op("roll", "expected one shift per dim (" + std::to_string(out.ndim) + "), got " +
                          std::to_string(shifts.u.ints.size));
  for (int32_t d = 0; d < out.ndim; ++d) {
    const int64_t sh = shifts.u.ints.data[d];
    if (sh < 0 || (sh > 0 && sh >= out.shape[d])) [[unlikely]]
      fail_op("roll", "shift " + std::to_string(sh) + " of dim " + std::to_string(d) + " is not in [0, " +
                            std::to_string(out.shape[d]) + ")");
    m.shift[d] = sh;
  }
  run_remap(c, "roll", m);
}

// ------------------------------------------------------------ tril/triu ---

// Every output element: kept ones copied (unless in place: they are already
// there), the others zeroed.
template <class W, bool InPlace>
__global__ void triangle_kernel(W* out, const W* in, DimMap m, bool lower, int64_t k) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < m.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, ioff = 0, ooff = 0, row = 0, col = 0;
    for (int32_t d = m.ndim - 1; d >= 0; --d) {
      const int64_t n = m.shape[d], q = rest / n, o = rest - q * n;
      rest = q;
      if (d == m.ndim - 1) col = o;
      if (d == m.ndim - 2) row = o;
      ioff += o * m.in_strides[d];
      ooff += o * m.out_strides[d];
    }
    const bool keep = triangle_keeps(lower, row, col, k);
    if (!keep) out[ooff] = W(0);
    else if constexpr (!InPlace) out[ooff] = in[ioff];
  }
}

template <bool Lower, bool InPlace>
void triangle(const LoomKernelCall& c) {
  const char* op = Lower ? (InPlace ? "tril_" : "tril") : (InPlace ? "triu_" : "triu");
  ew::expect_arity(c, op, 1, 1);
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  ew::expect_like(in, out, op);
  if (out.ndim < 2) [[unlikely]]
    fail_op(op, "expected at least 2 dims, got " + std::to_string(out.ndim));
  const int64_t k = ew::value_at(c, op, 0).u.i;
  const DimMap m = make_map(in, out, op);
  if (m.numel == 0) return;
  const cudaStream_t s = ew::enter(c);
  visit_width(out.dtype, op, [&](auto w) {
    using W = decltype(w);
    triangle_kernel<W, InPlace><<<grid_for(m.numel), kBlock, 0, s>>>(plugin::data_ptr<W>(out),
                                                                    plugin::data_ptr<const W>(in), m, Lower, k);
  });
  check_launch(out.device.index, op);
}

}  // namespace

void register_shape_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("cat", LOOM_GPU_NAME, kernel<cat>, kAllMask);
  r.kernel("flip", LOOM_GPU_NAME, kernel<flip>, kAllMask);
  r.kernel("roll", LOOM_GPU_NAME, kernel<roll>, kAllMask);
  r.kernel("tril", LOOM_GPU_NAME, kernel<triangle<true, false>>, kAllMask);
  r.kernel("triu", LOOM_GPU_NAME, kernel<triangle<false, false>>, kAllMask);
  r.kernel("tril_", LOOM_GPU_NAME, kernel<triangle<true, true>>, kAllMask);
  r.kernel("triu_", LOOM_GPU_NAME, kernel<triangle<false, true>>, kAllMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::indexing
