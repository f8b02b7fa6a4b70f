// The elementwise launcher every CUDA kernel family shares:
//
//   elementwise<Out, In...>(out_desc, {&in_desc...}, f, stream)
//
// writes out[i] = f(in0[i], in1[i], ...) over out's shape, each operand with
// its own strides (broadcast inputs arrive with stride 0) and storage type.
// `f` is a __device__ functor taking and returning storage types (it widens
// to compute types itself, see dtype.cuh). Three paths, chosen on the host:
//   - every operand dense and 16-byte aligned, all the same width: each
//     thread handles a 16-byte vector of every operand (one load and store
//     instruction per operand);
//   - every operand dense: a grid-stride loop over the linear index;
//   - otherwise: offsets from the simplified geometry (geometry.cuh).
// Out may alias an input element for element (in-place ops).
#pragma once

#include "dtype.cuh"
#include "geometry.cuh"

#include "vendor/gpu_runtime.hpp"

#include <array>
#include <cstdint>
#include <utility>

namespace loom::LOOM_GPU_NAMESPACE {

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

namespace detail {

// The input pointers, typed by the pack (a __global__ template may have only
// one pack, and it must come last).
template <class... In>
struct Pack {
  const void* p[sizeof...(In)];
};

template <class F, class... In, size_t... K>
__device__ inline auto apply_dense(const F& f, const Pack<In...>& in, int64_t i, std::index_sequence<K...>) {
  return f(static_cast<const In*>(in.p[K])[i]...);
}

template <class F, class... In, size_t... K>
__device__ inline auto apply_offsets(const F& f, const Pack<In...>& in, const int64_t* off, std::index_sequence<K...>) {
  return f(static_cast<const In*>(in.p[K])[off[K + 1]]...);
}

// A minimal tuple for device code: each input's vector loaded once (one
// 16-byte load), then read element by element.
template <size_t K, class T>
struct Leaf {
  T value;
};
template <class Seq, class... T>
struct Loaded;
template <size_t... K, class... T>
struct Loaded<std::index_sequence<K...>, T...> : Leaf<K, T>... {};
template <size_t K, class T>
__device__ inline const T& leaf(const Leaf<K, T>& l) {
  return l.value;
}

template <int V, class Out, class F, class... In, size_t... K>
__device__ inline void apply_vector(const F& f, const Pack<In...>& in, Out* out, int64_t i, std::index_sequence<K...>) {
  const Loaded<std::index_sequence<K...>, Vec<In, V>...> loaded{
      Leaf<K, Vec<In, V>>{reinterpret_cast<const Vec<In, V>*>(in.p[K])[i]}...};
  Vec<Out, V> r;
#pragma unroll
  for (int j = 0; j < V; ++j) r.v[j] = f(leaf<K>(loaded).v[j]...);
  reinterpret_cast<Vec<Out, V>*>(out)[i] = r;
}

template <class Out, class F, class... In>
__global__ void vector_kernel(Out* out, int64_t nvec, F f, Pack<In...> in) {
  constexpr int V = 16 / sizeof(Out);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < nvec; i += int64_t{gridDim.x} * blockDim.x)
    apply_vector<V>(f, in, out, i, std::index_sequence_for<In...>{});
}

template <class Out, class F, class... In>
__global__ void dense_kernel(Out* out, int64_t begin, int64_t n, F f, Pack<In...> in) {
  for (int64_t i = begin + blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = apply_dense(f, in, i, std::index_sequence_for<In...>{});
}

template <class Out, class F, class... In>
__global__ void strided_kernel(Out* out, Geometry<1 + sizeof...(In)> g, F f, Pack<In...> in) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[1 + sizeof...(In)];
    g.offsets(i, off);
    out[off[0]] = apply_offsets(f, in, off, std::index_sequence_for<In...>{});
  }
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace detail

template <class Out, class... In, class F>
void elementwise(const LoomTensorDesc& out, const std::array<const LoomTensorDesc*, sizeof...(In)>& ins, F f,
                 cudaStream_t stream, const char* op) {
  constexpr int N = 1 + sizeof...(In);
  const int64_t* strides[N];
  strides[0] = out.strides;
  for (size_t k = 0; k < sizeof...(In); ++k) strides[k + 1] = ins[k]->strides;
  Geometry<N> g;
  if (!make_geometry<N>(out.ndim, out.shape, strides, g))
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": more than 12 non-mergeable dims");
  if (g.numel == 0) return;
  Out* o = plugin::data_ptr<Out>(out);
  detail::Pack<In...> p{};
  for (size_t k = 0; k < sizeof...(In); ++k) p.p[k] = static_cast<const char*>(ins[k]->data) + ins[k]->byte_offset;
  bool all_aligned = detail::aligned16(o);
  for (size_t k = 0; k < sizeof...(In); ++k) all_aligned = all_aligned && detail::aligned16(p.p[k]);
  constexpr int V = 16 / sizeof(Out);
  constexpr bool same_width = ((sizeof(In) == sizeof(Out)) && ...);
  bool done = false;
  if (!g.dense()) {
    detail::strided_kernel<Out><<<grid_for(g.numel), kBlock, 0, stream>>>(o, g, f, p);
    done = true;
  }
  if constexpr (same_width && V > 1) {
    if (!done && g.numel >= V && all_aligned) {
      const int64_t nvec = g.numel / V;
      detail::vector_kernel<Out><<<grid_for(nvec), kBlock, 0, stream>>>(o, nvec, f, p);
      if (nvec * V < g.numel) detail::dense_kernel<Out><<<1, kBlock, 0, stream>>>(o, nvec * V, g.numel, f, p);
      done = true;
    }
  }
  if (!done) detail::dense_kernel<Out><<<grid_for(g.numel), kBlock, 0, stream>>>(o, 0, g.numel, f, p);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR, std::string(LOOM_GPU_NAME " ") + op + ": kernel launch failed: " +
                                                        cudaGetErrorString(e));
}

}  // namespace loom::LOOM_GPU_NAMESPACE
