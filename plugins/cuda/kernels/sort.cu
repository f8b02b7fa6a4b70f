// sort and topk on CUDA, matching the CPU plugin (plugins/cpu/sort.cpp;
// docs/kernel_conventions.md, "Shape"): every row along `dim` is ordered
// ascending or descending with NaN above every number, equal elements in
// index order.
//
// Rows are gathered into contiguous (key, index) pairs, the keys mapped to
// unsigned integers in sort order (indexing_ops.cuh sort_key: NaNs made one
// key, -0 made +0), and sorted with a segmented radix sort (CUB's or
// rocPRIM's, vendor/gpu_primitives.cuh), which is stable in both directions: equal keys keep index order, as required. The
// outputs then read the values back from the input at the sorted indices
// (so NaN payloads and -0 survive). topk sorts whole rows and writes the
// first k: the "sorted" flag may be ignored, best-first is always valid.
// The segmented sort counts items in int: calls with 2^31 elements or
// more are declined (UNSUPPORTED: the core falls back to the CPU).
#include "device_blocks.hpp"
#include "elementwise_args.hpp"
#include "geometry.cuh"
#include "index_shape.hpp"
#include "indexing_ops.cuh"
#include "vendor/gpu_primitives.cuh"
#include "vendor/gpu_target.hpp"


#include <climits>

namespace loom::LOOM_GPU_NAMESPACE::indexing {
namespace {

// Rows: every dim but `dim` (shape and each operand's strides), and the
// operands' strides along `dim`.
struct Rows {
  int32_t ndim;
  int64_t n, k;
  int64_t shape[kMaxKernelDims];
  int64_t in_strides[kMaxKernelDims], val_strides[kMaxKernelDims], idx_strides[kMaxKernelDims];
  int64_t in_dim, val_dim, idx_dim;
};

// Offsets of row r in the input, the values and the indices.
__device__ inline void row_offsets(const Rows& p, int64_t r, int64_t& in, int64_t& val, int64_t& idx) {
  in = val = idx = 0;
  for (int32_t d = p.ndim - 1; d >= 0; --d) {
    const int64_t q = r / p.shape[d], c = r - q * p.shape[d];
    r = q;
    in += c * p.in_strides[d];
    val += c * p.val_strides[d];
    idx += c * p.idx_strides[d];
  }
}

// Element i = r * n + j: key of the input's row r, position j; offsets[r] = r * n.
template <class T>
__global__ void gather_keys_kernel(const T* x, Rows p, int64_t total, uint64_t* keys, int64_t* order, int* offsets,
                                   int64_t rows) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / p.n, j = i - r * p.n;
    int64_t in, val, idx;
    row_offsets(p, r, in, val, idx);
    keys[i] = sort_key(x[in + j * p.in_dim]);
    order[i] = j;
    if (j == 0) offsets[r] = static_cast<int>(i);
    if (i == total - 1) offsets[rows] = static_cast<int>(total);
  }
}

// The first k of each sorted row to the outputs.
template <class T>
__global__ void write_kernel(const T* x, Rows p, int64_t count, const int64_t* order, T* values, int64_t* indices) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / p.k, j = i - r * p.k;
    int64_t in, val, idx;
    row_offsets(p, r, in, val, idx);
    const int64_t src = order[r * p.n + j];
    values[val + j * p.val_dim] = x[in + src * p.in_dim];
    indices[idx + j * p.idx_dim] = src;
  }
}

template <class T>
void sort_rows(const LoomKernelCall& c, const char* op, int32_t dim, int64_t k, bool descending) {
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& values = c.outputs[0];
  const LoomTensorDesc& indices = c.outputs[1];
  if (in.ndim > kMaxKernelDims + 1) [[unlikely]]
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": more than 13 dims");
  Rows p{};
  p.n = in.ndim == 0 ? 1 : in.shape[dim];
  p.k = k;
  p.in_dim = in.ndim == 0 ? 1 : in.strides[dim];
  p.val_dim = in.ndim == 0 ? 1 : values.strides[dim];
  p.idx_dim = in.ndim == 0 ? 1 : indices.strides[dim];
  int64_t rows = 1;
  for (int32_t d = 0; d < in.ndim; ++d) {
    if (d == dim) continue;
    p.shape[p.ndim] = in.shape[d];
    p.in_strides[p.ndim] = in.strides[d];
    p.val_strides[p.ndim] = values.strides[d];
    p.idx_strides[p.ndim++] = indices.strides[d];
    rows *= in.shape[d];
  }
  const int64_t total = rows * p.n;
  if (total == 0 || k == 0) return;
  if (total > INT_MAX) [[unlikely]]
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": " + std::to_string(total) +
                                                       " elements exceed the segmented sort's int count");
  const int device = values.device.index;
  const cudaStream_t s = ew::enter(c);
  Blocks blocks(device, s);
  const size_t n = static_cast<size_t>(total);
  // keys in/out, order in/out, then rows + 1 segment offsets.
  auto* keys =
      static_cast<uint64_t*>(blocks.get(n * 4 * sizeof(uint64_t) + static_cast<size_t>(rows + 1) * sizeof(int)));
  auto* sorted_keys = keys + n;
  auto* order = reinterpret_cast<int64_t*>(keys + 2 * n);
  auto* sorted_order = order + n;
  auto* offsets = reinterpret_cast<int*>(order + 2 * n);
  const T* x = plugin::data_ptr<const T>(in);
  gather_keys_kernel<<<grid_for(total), kBlock, 0, s>>>(x, p, total, keys, order, offsets, rows);
  check_launch(device, op);
  const int items = static_cast<int>(total), segments = static_cast<int>(rows), end_bit = sort_key_bits<T>;
  auto run = [&](void* temp, size_t& bytes) {
    return primitives::segmented_sort_pairs(descending, temp, bytes, keys, sorted_keys, order, sorted_order, items,
                                            segments, offsets, end_bit, s);
  };
  size_t temp_bytes = 0;
  check(run(nullptr, temp_bytes), device, "segmented sort (size)");
  check(run(blocks.get(temp_bytes > 0 ? temp_bytes : 1), temp_bytes), device, "segmented sort");
  const int64_t count = rows * k;
  write_kernel<<<grid_for(count), kBlock, 0, s>>>(x, p, count, sorted_order, plugin::data_ptr<T>(values),
                                                  plugin::data_ptr<int64_t>(indices));
  check_launch(device, op);
}

void check_outputs(const LoomKernelCall& c, const char* op) {
  ew::expect_arity(c, op, 1, 2);
  const LoomTensorDesc& in = c.inputs[0];
  if (c.outputs[0].dtype != in.dtype || c.outputs[1].dtype != LOOM_DTYPE_INT64 || c.outputs[0].ndim != in.ndim ||
      c.outputs[1].ndim != in.ndim) [[unlikely]]
    fail_op(op, std::string("expected values of dtype ") + plugin::dtype_name(in.dtype) +
                    " and int64 indices with " + std::to_string(in.ndim) + " dims");
}

int32_t checked_dim(const LoomKernelCall& c, const char* op, int64_t d) {
  const int32_t nd = c.inputs[0].ndim;
  if (d < 0 || d >= (nd > 1 ? nd : 1)) [[unlikely]]
    fail_op(op, "dim " + std::to_string(d) + " out of range for " + std::to_string(nd) + " dims");
  return static_cast<int32_t>(d);
}

// values: dim, descending, stable (every sort here is stable).
void sort(const LoomKernelCall& c) {
  check_outputs(c, "sort");
  const int32_t dim = checked_dim(c, "sort", ew::value_at(c, "sort", 0).u.i);
  const bool descending = ew::value_at(c, "sort", 1).u.i != 0;
  const LoomTensorDesc& in = c.inputs[0];
  const int64_t n = in.ndim == 0 ? 1 : in.shape[dim];
  visit<DTypes::All>(in.dtype, "sort", [&](auto t) { sort_rows<decltype(t)>(c, "sort", dim, n, descending); });
}

// values: k, dim, largest, sorted (the k are always written best first).
void topk(const LoomKernelCall& c) {
  check_outputs(c, "topk");
  const int64_t k = ew::value_at(c, "topk", 0).u.i;
  const int32_t dim = checked_dim(c, "topk", ew::value_at(c, "topk", 1).u.i);
  const bool largest = ew::value_at(c, "topk", 2).u.i != 0;
  const LoomTensorDesc& in = c.inputs[0];
  const int64_t n = in.ndim == 0 ? 1 : in.shape[dim];
  if (k < 0 || k > n) [[unlikely]]
    fail_op("topk", "k " + std::to_string(k) + " out of range for a dim of size " + std::to_string(n));
  visit<DTypes::NoBool>(in.dtype, "topk", [&](auto t) { sort_rows<decltype(t)>(c, "topk", dim, k, largest); });
}

}  // namespace

void register_sort_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("sort", LOOM_GPU_NAME, kernel<sort>, kAllMask);
  r.kernel("topk", LOOM_GPU_NAME, kernel<topk>, kNoBoolMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::indexing
