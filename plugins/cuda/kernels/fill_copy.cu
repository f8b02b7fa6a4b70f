// fill_ and copy_ on CUDA, for every dtype and any strides (the core's
// rules: docs/kernel_conventions.md "fill_", "copy_" and "Casting between
// dtypes"). fill_'s value is converted once on the host (plugin/cast.hpp)
// and written as raw bytes; copy_ within one dtype moves bytes, across
// dtypes it converts on the device through a wide value (int64 or double,
// which hold every loom value exactly) with CUDA's correctly rounded
// intrinsics for the 16-bit floats. One kernel serves every dtype pair, so
// the plugin compiles once, not 100 times.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "geometry.cuh"

#include <loom/plugin/cast.hpp>

#include "vendor/gpu_runtime.hpp"

#include <cstring>
#include <limits>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

// ---- fill_ --------------------------------------------------------------------------------

template <class Word>
__global__ void fill_kernel(char* base, Geometry<1> g, Word value) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[1];
    if (g.ndim == 1) off[0] = i * g.strides[0][0];
    else g.offsets(i, off);
    reinterpret_cast<Word*>(base)[off[0]] = value;
  }
}

// The value as `dtype`'s bytes, in the low bytes of a 64-bit word.
uint64_t fill_bits(const LoomValue& v, int32_t dtype) {
  uint64_t bits = 0;
  plugin::visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    T x{};
    switch (v.kind) {
      case LOOM_VALUE_BOOL: x = plugin::cast<T>(v.u.i != 0); break;
      case LOOM_VALUE_INT: x = plugin::cast<T>(static_cast<int64_t>(v.u.i)); break;
      case LOOM_VALUE_FLOAT: x = plugin::cast<T>(v.u.f); break;
      default: throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " fill_: expected a Scalar value");
    }
    std::memcpy(&bits, &x, sizeof x);
  });
  return bits;
}

template <class Word>
void launch_fill(const LoomTensorDesc& t, const Geometry<1>& g, uint64_t bits, cudaStream_t s) {
  Word w;
  std::memcpy(&w, &bits, sizeof w);
  fill_kernel<Word><<<grid_for(g.numel), kBlock, 0, s>>>(plugin::data_ptr<char>(t), g, w);
}

void fill_(const LoomKernelCall& c) {
  const LoomTensorDesc& t = c.outputs[0];
  if (c.num_values < 1) throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " fill_: missing the value");
  const int index = t.device.index;
  const int64_t* strides[1] = {t.strides};
  Geometry<1> g;
  if (!make_geometry<1>(t.ndim, t.shape, strides, g))
    throw Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME " fill_: more than 12 non-mergeable dims");
  if (g.numel == 0) return;
  use_device(index);
  const uint64_t bits = fill_bits(c.values[0], t.dtype);
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  switch (plugin::dtype_itemsize(t.dtype)) {
    case 1: launch_fill<uint8_t>(t, g, bits, s); break;
    case 2: launch_fill<uint16_t>(t, g, bits, s); break;
    case 4: launch_fill<uint32_t>(t, g, bits, s); break;
    default: launch_fill<uint64_t>(t, g, bits, s); break;
  }
  check(cudaGetLastError(), index, "fill_ kernel launch");
}

// ---- copy_ --------------------------------------------------------------------------------

// A loom value held exactly: integers and bools as int64, floats as double.
struct Wide {
  bool is_float;
  int64_t i;
  double f;
};

__device__ Wide load(const char* p, int32_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_BOOL: return {false, *reinterpret_cast<const uint8_t*>(p) != 0, 0};
    case LOOM_DTYPE_UINT8: return {false, *reinterpret_cast<const uint8_t*>(p), 0};
    case LOOM_DTYPE_INT8: return {false, *reinterpret_cast<const int8_t*>(p), 0};
    case LOOM_DTYPE_INT16: return {false, *reinterpret_cast<const int16_t*>(p), 0};
    case LOOM_DTYPE_INT32: return {false, *reinterpret_cast<const int32_t*>(p), 0};
    case LOOM_DTYPE_INT64: return {false, *reinterpret_cast<const int64_t*>(p), 0};
    case LOOM_DTYPE_FLOAT16: return {true, 0, __half2float(*reinterpret_cast<const __half*>(p))};
    case LOOM_DTYPE_BFLOAT16: return {true, 0, __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(p))};
    case LOOM_DTYPE_FLOAT32: return {true, 0, *reinterpret_cast<const float*>(p)};
    default: return {true, 0, *reinterpret_cast<const double*>(p)};
  }
}

// float -> integer: truncate toward zero, NaN -> 0, saturate outside the range.
template <class I>
__device__ I saturate(double d) {
  if (d != d) return 0;
  if (d <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (d >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(d);
}

template <class I>
__device__ I to_int(const Wide& v) {
  return v.is_float ? saturate<I>(v.f) : static_cast<I>(v.i);
}

__device__ void store(char* p, int32_t dtype, const Wide& v) {
  switch (dtype) {
    case LOOM_DTYPE_BOOL: *reinterpret_cast<uint8_t*>(p) = v.is_float ? v.f != 0 : v.i != 0; break;
    case LOOM_DTYPE_UINT8: *reinterpret_cast<uint8_t*>(p) = to_int<uint8_t>(v); break;
    case LOOM_DTYPE_INT8: *reinterpret_cast<int8_t*>(p) = to_int<int8_t>(v); break;
    case LOOM_DTYPE_INT16: *reinterpret_cast<int16_t*>(p) = to_int<int16_t>(v); break;
    case LOOM_DTYPE_INT32: *reinterpret_cast<int32_t*>(p) = to_int<int32_t>(v); break;
    case LOOM_DTYPE_INT64: *reinterpret_cast<int64_t*>(p) = to_int<int64_t>(v); break;
    case LOOM_DTYPE_FLOAT16:
      *reinterpret_cast<__half*>(p) = v.is_float ? __double2half(v.f) : __ll2half_rn(v.i);
      break;
    case LOOM_DTYPE_BFLOAT16:
      *reinterpret_cast<__nv_bfloat16*>(p) = v.is_float ? __double2bfloat16(v.f) : __ll2bfloat16_rn(v.i);
      break;
    case LOOM_DTYPE_FLOAT32:
      *reinterpret_cast<float*>(p) = v.is_float ? static_cast<float>(v.f) : __ll2float_rn(v.i);
      break;
    default: *reinterpret_cast<double*>(p) = v.is_float ? v.f : static_cast<double>(v.i); break;
  }
}

// operand 0: destination, operand 1: source; offsets in bytes.
__global__ void convert_kernel(char* dst, int32_t dst_dtype, const char* src, int32_t src_dtype, Geometry<2> g) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[2];
    g.offsets(i, off);
    store(dst + off[0], dst_dtype, load(src + off[1], src_dtype));
  }
}

template <class Word>
__global__ void move_kernel(Word* dst, const Word* src, Geometry<2> g) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    if (g.dense()) {
      dst[i] = src[i];
      continue;
    }
    int64_t off[2];
    g.offsets(i, off);
    dst[off[0]] = src[off[1]];
  }
}

// [first, last) bytes a descriptor can touch (strides are non-negative).
void byte_range(const LoomTensorDesc& t, const char*& first, const char*& last) {
  int64_t span = 1;
  for (int32_t d = 0; d < t.ndim; ++d) span += (t.shape[d] - 1) * t.strides[d];
  first = plugin::data_ptr<const char>(t);
  last = first + span * static_cast<int64_t>(plugin::dtype_itemsize(t.dtype));
}

void launch_copy(const LoomTensorDesc& dst, const LoomTensorDesc& src, cudaStream_t s) {
  const size_t dsize = plugin::dtype_itemsize(dst.dtype), ssize = plugin::dtype_itemsize(src.dtype);
  Geometry<2> g;
  if (dst.dtype == src.dtype) {  // element strides, moved as words of the item size
    const int64_t* strides[2] = {dst.strides, src.strides};
    if (!make_geometry<2>(dst.ndim, dst.shape, strides, g))
      throw Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME " copy_: more than 12 non-mergeable dims");
    if (g.numel == 0) return;
    char* d = plugin::data_ptr<char>(dst);
    const char* r = plugin::data_ptr<const char>(src);
    if (g.dense()) {
      // One dense run each (clone, contiguous()): the copy engine's memcpy
      // runs at the copy bandwidth; move_kernel's word loop reached half of it.
      check(cudaMemcpyAsync(d, r, static_cast<size_t>(g.numel) * dsize, cudaMemcpyDeviceToDevice, s),
            dst.device.index, "cudaMemcpyAsync (dense copy_)");
      return;
    }
    switch (dsize) {
      case 1: move_kernel<<<grid_for(g.numel), kBlock, 0, s>>>(reinterpret_cast<uint8_t*>(d), reinterpret_cast<const uint8_t*>(r), g); break;
      case 2: move_kernel<<<grid_for(g.numel), kBlock, 0, s>>>(reinterpret_cast<uint16_t*>(d), reinterpret_cast<const uint16_t*>(r), g); break;
      case 4: move_kernel<<<grid_for(g.numel), kBlock, 0, s>>>(reinterpret_cast<uint32_t*>(d), reinterpret_cast<const uint32_t*>(r), g); break;
      default: move_kernel<<<grid_for(g.numel), kBlock, 0, s>>>(reinterpret_cast<uint64_t*>(d), reinterpret_cast<const uint64_t*>(r), g); break;
    }
    return;
  }
  // Byte strides, so one kernel reads and writes any dtype pair.
  std::vector<int64_t> db(static_cast<size_t>(dst.ndim)), sb(static_cast<size_t>(dst.ndim));
  for (size_t d = 0; d < db.size(); ++d) {
    db[d] = dst.strides[d] * static_cast<int64_t>(dsize);
    sb[d] = src.strides[d] * static_cast<int64_t>(ssize);
  }
  const int64_t* strides[2] = {db.data(), sb.data()};
  if (!make_geometry<2>(dst.ndim, dst.shape, strides, g))
    throw Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME " copy_: more than 12 non-mergeable dims");
  if (g.numel == 0) return;
  convert_kernel<<<grid_for(g.numel), kBlock, 0, s>>>(plugin::data_ptr<char>(dst), dst.dtype,
                                                       plugin::data_ptr<const char>(src), src.dtype, g);
}

void copy_(const LoomKernelCall& c) {
  if (c.num_inputs < 2 || c.num_outputs < 1)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " copy_: expected (self, src) and one output");
  const LoomTensorDesc& dst = c.outputs[0];
  const LoomTensorDesc& src = c.inputs[1];
  if (dst.ndim != src.ndim)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " copy_: src must arrive broadcast to self's shape");
  const int index = dst.device.index;
  use_device(index);
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  const char *d0, *d1, *s0, *s1;
  byte_range(dst, d0, d1);
  byte_range(src, s0, s1);
  const bool overlap = plugin::numel(dst) > 0 && d0 < s1 && s0 < d1;
  if (!overlap) {
    launch_copy(dst, src, s);
  } else {
    // Overlapping memory (x[1:] = x[:-1]): stage the source densely first.
    // The staging block is freed at once: the allocator reuses it on this
    // stream only, after the copies queued here.
    std::vector<int64_t> dense(static_cast<size_t>(src.ndim));
    int64_t stride = 1;
    for (int32_t d = src.ndim - 1; d >= 0; --d) {
      dense[static_cast<size_t>(d)] = stride;
      stride *= src.shape[d];
    }
    gpu::CachingAllocator& a = allocator(index);
    void* buf = a.allocate(static_cast<size_t>(stride) * plugin::dtype_itemsize(src.dtype), s);
    LoomTensorDesc tmp = src;
    tmp.data = buf;
    tmp.byte_offset = 0;
    tmp.strides = dense.data();
    launch_copy(tmp, src, s);
    launch_copy(dst, tmp, s);
    a.free(buf);
  }
  check(cudaGetLastError(), index, "copy_ kernel launch");
}

}  // namespace

void register_fill_copy_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  const uint64_t all = (uint64_t{1} << LOOM_DTYPE_COUNT) - 1;
  r.kernel("fill_", LOOM_GPU_NAME, kernel<fill_>, all);
  r.kernel("copy_", LOOM_GPU_NAME, kernel<copy_>, all);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
