// uniform_, normal_ and dropout on CUDA. Element i (row-major logical index
// over the output's shape) draws Philox block philox_for_element(seed,
// offset, i) and maps it with the formulas of plugin/philox.hpp, the header
// every device shares, so manual_seed reproduces the same numbers here as
// on the CPU (up to the last bits of the device's log/cos/sqrt in normal_).
// Geometry keeps row-major order when it merges dims, so the linear index of
// the simplified shape is the logical index.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "dtype.cuh"
#include "geometry.cuh"
#include "vendor/gpu_target.hpp"

#include <loom/plugin/philox.hpp>

#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

struct GeneratorState {
  uint64_t seed, offset;
};

GeneratorState generator_state(const LoomKernelCall& c, int at, const char* op) {
  if (c.num_values <= at || c.values[at].kind != LOOM_VALUE_INT_LIST || c.values[at].u.ints.size != 2)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  std::string(LOOM_GPU_NAME " ") + op + ": the generator argument must be an int list {seed, offset}");
  return {static_cast<uint64_t>(c.values[at].u.ints.data[0]), static_cast<uint64_t>(c.values[at].u.ints.data[1])};
}

// float64 samples in double, every other floating dtype in float.
template <class T>
using SampleT = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <bool Normal, class T>
__global__ void random_kernel(T* out, Geometry<1> g, GeneratorState gen, SampleT<T> a, SampleT<T> b) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    const plugin::Philox4x32 blk = plugin::philox_for_element(gen.seed, gen.offset, static_cast<uint64_t>(i));
    SampleT<T> v;
    if constexpr (std::is_same_v<T, double>)
      v = Normal ? plugin::normal_sample_f64(blk, a, b) : plugin::uniform_sample_f64(blk, a, b);
    else
      v = Normal ? plugin::normal_sample_f32(blk, a, b) : plugin::uniform_sample_f32(blk, a, b);
    int64_t off[1];
    g.offsets(i, off);
    out[off[0]] = narrow<T>(static_cast<opmath_t<T>>(v));
  }
}

template <bool Normal>
void random_op(const LoomKernelCall& c) {
  const char* op = Normal ? "normal_" : "uniform_";
  if (c.num_outputs < 1 || c.num_values < 3) throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": malformed call");
  const LoomTensorDesc& out = c.outputs[0];
  const GeneratorState gen = generator_state(c, 2, op);
  const double a = plugin::value_float(c, 0), b = plugin::value_float(c, 1);  // from/to or mean/std
  const int64_t* strides[1] = {out.strides};
  Geometry<1> g;
  if (!make_geometry<1>(out.ndim, out.shape, strides, g))
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": more than 12 non-mergeable dims");
  if (g.numel == 0) return;
  use_device(out.device.index);
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  visit<DTypes::Floating>(out.dtype, op, [&](auto t) {
    using T = decltype(t);
    using S = SampleT<T>;
    random_kernel<Normal, T><<<grid_for(g.numel), kBlock, 0, s>>>(plugin::data_ptr<T>(out), g, gen, static_cast<S>(a),
                                                                static_cast<S>(b));
  });
  check(cudaGetLastError(), out.device.index, op);
}

// out = u < keep ? x * scale : 0, u the float32 (float64 for float64)
// uniform_ draw of the element; p == 1 keeps x * 0 (NaN stays NaN), as the
// CPU kernel and the core's composite do.
template <class T>
__global__ void dropout_kernel(T* out, const T* in, Geometry<2> g, GeneratorState gen, SampleT<T> keep,
                               SampleT<T> scale, bool all_dropped) {
  using C = SampleT<T>;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    const plugin::Philox4x32 blk = plugin::philox_for_element(gen.seed, gen.offset, static_cast<uint64_t>(i));
    C u;
    if constexpr (std::is_same_v<C, double>) u = plugin::uniform_sample_f64(blk, 0.0, 1.0);
    else u = plugin::uniform_sample_f32(blk, 0.0f, 1.0f);
    int64_t off[2];
    g.offsets(i, off);
    const C x = static_cast<C>(widen(in[off[1]]));
    out[off[0]] = narrow<T>(static_cast<opmath_t<T>>(u < keep ? x * scale : all_dropped ? x * C(0) : C(0)));
  }
}

void dropout(const LoomKernelCall& c) {
  if (c.num_inputs < 1 || c.num_outputs < 1 || c.num_values < 3)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " dropout: malformed call");
  const LoomTensorDesc &in = c.inputs[0], &out = c.outputs[0];
  const double p = plugin::value_float(c, 0);
  if (!(p >= 0 && p <= 1)) throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " dropout: p must be in [0, 1]");
  const GeneratorState gen = generator_state(c, 2, "dropout");
  const int64_t* strides[2] = {out.strides, in.strides};
  Geometry<2> g;
  if (!make_geometry<2>(out.ndim, out.shape, strides, g))
    throw Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME " dropout: more than 12 non-mergeable dims");
  if (g.numel == 0) return;
  use_device(out.device.index);
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  visit<DTypes::Floating>(out.dtype, "dropout", [&](auto t) {
    using T = decltype(t);
    using C = SampleT<T>;
    // The scale rounded to the input dtype first, as the composite's x * scale.
    C scale;
    if constexpr (std::is_same_v<T, __half>) scale = static_cast<C>(plugin::cast<plugin::Half>(1.0 / (1.0 - p)));
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) scale = static_cast<C>(plugin::cast<plugin::BFloat16>(1.0 / (1.0 - p)));
    else scale = static_cast<C>(static_cast<T>(1.0 / (1.0 - p)));
    dropout_kernel<T><<<grid_for(g.numel), kBlock, 0, s>>>(plugin::data_ptr<T>(out), plugin::data_ptr<const T>(in), g,
                                                         gen, static_cast<C>(1.0 - p), scale, p == 1);
  });
  check(cudaGetLastError(), out.device.index, "dropout");
}

}  // namespace

void register_random_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("uniform_", LOOM_GPU_NAME, kernel<random_op<false>>, kFloatingMask);
  r.kernel("normal_", LOOM_GPU_NAME, kernel<random_op<true>>, kFloatingMask);
  r.kernel("dropout", LOOM_GPU_NAME, kernel<dropout>, kFloatingMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
