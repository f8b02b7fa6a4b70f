// Mask-driven indexing on CUDA, matching the CPU plugin (plugins/cpu/
// indexing_masked.cpp; docs/kernel_conventions.md, "Indexing"):
// masked_fill_.Scalar (elementwise, loops.cuh), and the two compactions whose
// output size the core counted beforehand, nonzero and masked_select.
//
// A compaction runs three passes over the input in row-major order: a flag
// per element (selected or not) into an int64 scratch array, an exclusive
// prefix sum of the flags (primitives::exclusive_sum) giving each selected element its
// output row, and a pass writing the selected elements there. The write
// pass also computes the total, which the host reads back and compares with
// the size the core allocated (a mismatch is INVALID_ARGUMENT, as on the
// CPU; rows past the allocation are never written).
#include "device_blocks.hpp"
#include "elementwise_args.hpp"
#include "geometry.cuh"
#include "index_shape.hpp"
#include "indexing_ops.cuh"
#include "loops.cuh"
#include "vendor/gpu_primitives.cuh"
#include "vendor/gpu_target.hpp"


#include <cstring>

namespace loom::LOOM_GPU_NAMESPACE::indexing {
namespace {

// ---- masked_fill_ ------------------------------------------------------------------------

template <class W>
struct MaskedFill {
  W value;
  __device__ W operator()(W x, bool m) const { return m ? value : x; }
};

// inputs: self (= outputs[0]), bool mask read as self's shape; values: value.
void masked_fill_(const LoomKernelCall& c) {
  constexpr const char* op = "masked_fill_";
  ew::expect_arity(c, op, 2, 1);
  const LoomTensorDesc& out = c.outputs[0];
  const LoomTensorDesc& self = c.inputs[0];
  const LoomTensorDesc& mask = c.inputs[1];
  ew::expect_like(mask, out, op, false);
  ew::expect_like(self, out, op);
  if (mask.dtype != LOOM_DTYPE_BOOL) [[unlikely]]
    fail_op(op, std::string("mask must be bool, got ") + plugin::dtype_name(mask.dtype));
  // The value in self's dtype (the shared casting rules), as raw bytes.
  uint64_t bits = 0;
  visit<DTypes::All>(out.dtype, op, [&](auto t) {
    using H = typename ew::HostOf<decltype(t)>::type;
    const H v = ew::scalar_arg<H>(c, op, 0);
    std::memcpy(&bits, &v, sizeof v);
  });
  const cudaStream_t s = ew::enter(c);
  visit_width(out.dtype, op, [&](auto w) {
    using W = decltype(w);
    MaskedFill<W> f{};
    std::memcpy(&f.value, &bits, sizeof f.value);  // little-endian: the low bytes
    elementwise<W, W, bool>(out, {&self, &mask}, f, s, op);
  });
}

// ---- compaction --------------------------------------------------------------------------

// The input's dims (not simplified: nonzero writes coordinates in them) and
// the strides of the data and of the mask (masked_select) read over them.
struct Walk {
  int32_t ndim;
  int64_t numel;
  int64_t shape[kMaxKernelDims];
  int64_t x_strides[kMaxKernelDims];
  int64_t m_strides[kMaxKernelDims];
};

// Offsets of element i in x and the mask; its coordinates in coord.
__device__ inline void walk_offsets(const Walk& w, int64_t i, int64_t* coord, int64_t& xo, int64_t& mo) {
  unravel(i, w.ndim, w.shape, coord);
  xo = 0;
  mo = 0;
  for (int32_t d = 0; d < w.ndim; ++d) {
    xo += coord[d] * w.x_strides[d];
    mo += coord[d] * w.m_strides[d];
  }
}

// Selection rules: nonzero (the data itself) or masked_select (the mask).
template <class T>
struct NonzeroRule {
  const T* x;
  __device__ bool operator()(int64_t xo, int64_t) const { return is_nonzero(x[xo]); }
};
struct MaskRule {
  const bool* m;
  __device__ bool operator()(int64_t, int64_t mo) const { return m[mo]; }
};

template <class Rule>
__global__ void flag_kernel(int64_t* pos, Walk w, Rule rule) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < w.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t coord[kMaxKernelDims], xo, mo;
    walk_offsets(w, i, coord, xo, mo);
    pos[i] = rule(xo, mo) ? 1 : 0;
  }
}

// Writers of one selected element at output row `row`.
struct CoordWriter {  // nonzero: the coordinates
  int64_t* out;
  int64_t row_stride, col_stride;
  int32_t ndim;
  __device__ void operator()(int64_t row, const int64_t* coord, int64_t) const {
    for (int32_t d = 0; d < ndim; ++d) out[row * row_stride + d * col_stride] = coord[d];
  }
};
template <class W>
struct ValueWriter {  // masked_select: the value
  W* out;
  const W* x;
  int64_t stride;
  __device__ void operator()(int64_t row, const int64_t*, int64_t xo) const { out[row * stride] = x[xo]; }
};

// pos holds the exclusive prefix sum of the flags; the last element's thread
// stores the total.
template <class Rule, class Writer>
__global__ void write_kernel(const int64_t* pos, Walk w, Rule rule, Writer write, int64_t rows, long long* total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < w.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t coord[kMaxKernelDims], xo, mo;
    walk_offsets(w, i, coord, xo, mo);
    const bool selected = rule(xo, mo);
    if (selected && pos[i] < rows) write(pos[i], coord, xo);
    if (i == w.numel - 1) *total = static_cast<long long>(pos[i] + (selected ? 1 : 0));
  }
}

Walk make_walk(const LoomTensorDesc& x, const int64_t* mask_strides, const char* op) {
  if (x.ndim > kMaxKernelDims) [[unlikely]]
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": more than 12 dims");
  Walk w{};
  w.ndim = x.ndim;
  w.numel = plugin::numel(x);
  for (int32_t d = 0; d < x.ndim; ++d) {
    w.shape[d] = x.shape[d];
    w.x_strides[d] = x.strides[d];
    w.m_strides[d] = mask_strides ? mask_strides[d] : 0;
  }
  return w;
}

// Flags, scan, write; then checks the total against `rows`, the size the
// core allocated.
template <class Rule, class Writer>
void compact(const LoomKernelCall& c, const char* op, const Walk& w, Rule rule, Writer write, int64_t rows) {
  const int device = c.outputs[0].device.index;
  const cudaStream_t s = ew::enter(c);
  if (w.numel == 0) {
    if (rows != 0) [[unlikely]]
      fail_op(op, "the output has room for " + std::to_string(rows) + " elements but the input selects 0");
    return;
  }
  Blocks blocks(device, s);
  // pos (numel int64) followed by the total.
  auto* pos = static_cast<int64_t*>(blocks.get(static_cast<size_t>(w.numel + 1) * sizeof(int64_t)));
  auto* total = reinterpret_cast<long long*>(pos + w.numel);
  flag_kernel<<<grid_for(w.numel), kBlock, 0, s>>>(pos, w, rule);
  check_launch(device, op);
  size_t temp_bytes = 0;
  check(primitives::exclusive_sum(nullptr, temp_bytes, pos, pos, w.numel, s), device, "exclusive sum (size)");
  void* temp = blocks.get(temp_bytes > 0 ? temp_bytes : 1);
  check(primitives::exclusive_sum(temp, temp_bytes, pos, pos, w.numel, s), device, "exclusive sum");
  write_kernel<<<grid_for(w.numel), kBlock, 0, s>>>(pos, w, rule, write, rows, total);
  check_launch(device, op);
  long long found = 0;
  check(cudaMemcpyAsync(&found, total, sizeof found, cudaMemcpyDeviceToHost, s), device, "cudaMemcpyAsync (count)");
  check(cudaStreamSynchronize(s), device, "cudaStreamSynchronize (count)");
  if (found != rows) [[unlikely]]
    fail_op(op, "the output has room for " + std::to_string(rows) + " elements but the input selects " +
                    std::to_string(found));
}

// inputs: self (any shape); outputs: int64 [n, self.ndim], n counted by the core.
void nonzero(const LoomKernelCall& c) {
  ew::expect_arity(c, "nonzero", 1, 1);
  const LoomTensorDesc& x = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  if (out.ndim != 2 || out.dtype != LOOM_DTYPE_INT64 || out.shape[1] != x.ndim) [[unlikely]]
    fail_op("nonzero", "output must be int64 [n, " + std::to_string(x.ndim) + "]");
  const Walk w = make_walk(x, nullptr, "nonzero");
  const CoordWriter write{plugin::data_ptr<int64_t>(out), out.strides[0], out.strides[1], x.ndim};
  visit<DTypes::All>(x.dtype, "nonzero", [&](auto t) {
    using T = decltype(t);
    compact(c, "nonzero", w, NonzeroRule<T>{plugin::data_ptr<const T>(x)}, write, out.shape[0]);
  });
}

// inputs: self and bool mask, both read as the broadcast shape; outputs: [n].
void masked_select(const LoomKernelCall& c) {
  ew::expect_arity(c, "masked_select", 2, 1);
  const LoomTensorDesc& x = c.inputs[0];
  const LoomTensorDesc& mask = c.inputs[1];
  const LoomTensorDesc& out = c.outputs[0];
  ew::expect_like(mask, x, "masked_select", false);
  if (mask.dtype != LOOM_DTYPE_BOOL || out.ndim != 1 || out.dtype != x.dtype) [[unlikely]]
    fail_op("masked_select", "expected a bool mask and a 1-D output of self's dtype");
  const Walk w = make_walk(x, mask.strides, "masked_select");
  const MaskRule rule{plugin::data_ptr<const bool>(mask)};
  visit_width(x.dtype, "masked_select", [&](auto word) {
    using W = decltype(word);
    const ValueWriter<W> write{plugin::data_ptr<W>(out), plugin::data_ptr<const W>(x), out.strides[0]};
    compact(c, "masked_select", w, rule, write, out.shape[0]);
  });
}

}  // namespace

void register_masked_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("masked_fill_.Scalar", LOOM_GPU_NAME, kernel<masked_fill_>, kAllMask);
  r.kernel("nonzero", LOOM_GPU_NAME, kernel<nonzero>, kAllMask);
  r.kernel("masked_select", LOOM_GPU_NAME, kernel<masked_select>, kAllMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::indexing
