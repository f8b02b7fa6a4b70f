// The GPU runtime the CUDA plugin's sources are written against, for the
// two vendors they build for (docs/hip.md). The sources use CUDA's names
// (cudaStream_t, cudaMemcpyAsync, __half, __nv_bfloat16, __shfl_down_sync,
// ...); built for CUDA this header only includes CUDA's headers, built for
// HIP (plugins/hip defines LOOM_GPU_HIP) it maps each of those names to
// HIP's and fills in what HIP 5.2 lacks. With the other headers of vendor/
// it is the only place that knows one vendor from the other: no kernel
// source is duplicated or ifdef'd on the vendor. It also holds each
// vendor's driver check, behind "zero devices and the reason".
// gpu_target.hpp (included here) names the build's device type and marks
// host-and-device helpers.
#pragma once

#include "gpu_target.hpp"

#if !defined(LOOM_GPU_HIP)

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

namespace loom::gpu_vendor {

inline constexpr const char* kRuntimeName = "CUDA";
inline constexpr const char* kDriverFoundNoDevice = "the NVIDIA driver found no GPU";

// Why no device can exist here, found before asking the runtime (whose own
// answer without a driver, "insufficient driver", reads like a version
// problem), or nullptr. The library handle stays open: CUDA loads the same
// library right after.
inline const char* missing_driver() {
  return dlopen("libcuda.so.1", RTLD_LAZY) == nullptr ? "no NVIDIA driver: libcuda.so.1 not found" : nullptr;
}

}  // namespace loom::gpu_vendor

#else  // ---- HIP (AMD) ------------------------------------------------------------------------

#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#include <unistd.h>

#include "round_to_odd.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace loom::gpu_vendor {

inline constexpr const char* kRuntimeName = "HIP";
inline constexpr const char* kDriverFoundNoDevice = "the AMD GPU driver found no GPU";

// Why no device can exist here, found before asking the runtime, or
// nullptr: ROCm reaches every AMD GPU through the amdgpu driver's /dev/kfd.
inline const char* missing_driver() {
  return access("/dev/kfd", F_OK) != 0
             ? "no AMD GPU driver: /dev/kfd not found (amdgpu kernel driver not loaded, or not visible here)"
             : nullptr;
}

}  // namespace loom::gpu_vendor

// Types.
#define cudaError_t hipError_t
#define cudaStream_t hipStream_t
#define cudaEvent_t hipEvent_t
#define cudaDeviceProp hipDeviceProp_t
#define __nv_bfloat16 hip_bfloat16

// Status codes and flags.
#define cudaSuccess hipSuccess
#define cudaErrorNotReady hipErrorNotReady
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaHostAllocPortable hipHostMallocPortable
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
// AMD has no opt-in above the per-block maximum (64 KiB of LDS): the
// maximum is what a block may use.
#define cudaDevAttrMaxSharedMemoryPerBlockOptin hipDeviceAttributeMaxSharedMemoryPerBlock
#define cudaFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize

// Runtime calls (same arguments, same meaning).
#define cudaGetLastError hipGetLastError
#define cudaGetErrorString hipGetErrorString
#define cudaGetErrorName hipGetErrorName
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaSetDevice hipSetDevice
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaHostAlloc hipHostMalloc
#define cudaFreeHost hipHostFree
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyPeerAsync hipMemcpyPeerAsync
#define cudaMemsetAsync hipMemsetAsync
#define cudaStreamCreate hipStreamCreate
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamQuery hipStreamQuery
#define cudaStreamWaitEvent hipStreamWaitEvent
#define cudaEventCreate hipEventCreate
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDestroy hipEventDestroy
#define cudaEventRecord hipEventRecord
#define cudaEventQuery hipEventQuery
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor

// hipFuncSetAttribute takes the kernel as a plain pointer.
template <class Kernel>
inline hipError_t cudaFuncSetAttribute(Kernel kernel, hipFuncAttribute attribute, int value) {
  return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel), attribute, value);
}

// ---- warps ------------------------------------------------------------------------------------
// The kernels are written for 32-lane warps (lane = tid % 32, shuffles
// within 32). AMD's wavefronts are 64 lanes wide (32 on RDNA): a shuffle
// with width 32 stays within each half of the wavefront, so every wave
// runs as two of the kernels' warps. HIP 5.2 has no masked (_sync)
// shuffles; a wavefront runs in lockstep, so the mask (always the full
// warp in these sources) has nothing to add.
inline constexpr int kLoomWarpLanes = 32;

template <class V>
__device__ inline V __shfl_sync(unsigned, V v, int src, int width = kLoomWarpLanes) {
  return __shfl(v, src, width);
}
template <class V>
__device__ inline V __shfl_down_sync(unsigned, V v, unsigned delta, int width = kLoomWarpLanes) {
  return __shfl_down(v, delta, width);
}
template <class V>
__device__ inline V __shfl_up_sync(unsigned, V v, unsigned delta, int width = kLoomWarpLanes) {
  return __shfl_up(v, delta, width);
}
template <class V>
__device__ inline V __shfl_xor_sync(unsigned, V v, int mask, int width = kLoomWarpLanes) {
  return __shfl_xor(v, mask, width);
}

// A warp barrier: the wavefront's lanes are in lockstep, so what is left to
// order is memory: shared-memory writes before it are seen after it.
__device__ inline void __syncwarp(unsigned = 0xffffffffu) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}

// ---- math -------------------------------------------------------------------------------------
// CUDA declares float overloads of the C math functions for host code too,
// so exp(float) in a __host__ __device__ helper stays float on both sides;
// HIP declares them for the device only. <cmath>'s float overloads fill in
// for the host side.
using std::exp;
using std::log;

// ---- atomics -----------------------------------------------------------------------------------
// CUDA has a 16-bit compare-and-swap (sm_70 on); AMD's is emulated here on
// the aligned 32-bit word that holds it, the other half kept as it is.
__device__ inline unsigned short atomicCAS(unsigned short* address, unsigned short compare, unsigned short value) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  auto* word = reinterpret_cast<unsigned int*>(at & ~uintptr_t{3});
  const unsigned int shift = (at & 2u) ? 16u : 0u, mask = 0xffffu << shift;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    if (((assumed & mask) >> shift) != compare) break;
    old = atomicCAS(word, assumed, (assumed & ~mask) | (static_cast<unsigned int>(value) << shift));
  } while (old != assumed);
  return static_cast<unsigned short>((old & mask) >> shift);
}

// ---- 16-bit floats ----------------------------------------------------------------------------
// HIP's __half has CUDA's conversions except from double; its bfloat16 is
// the hip_bfloat16 struct (float conversions, round to nearest even). From
// double, both round once through round_to_odd.hpp.
__host__ __device__ inline float __bfloat162float(hip_bfloat16 v) { return static_cast<float>(v); }
__host__ __device__ inline hip_bfloat16 __float2bfloat16_rn(float v) { return hip_bfloat16(v); }
__host__ __device__ inline hip_bfloat16 __double2bfloat16(double v) {
  return hip_bfloat16(loom::gpu_vendor::round_to_odd(v));
}
__host__ __device__ inline hip_bfloat16 __ll2bfloat16_rn(long long v) {
  return __double2bfloat16(static_cast<double>(v));
}
__host__ __device__ inline __half __double2half(double v) {
  return __float2half_rn(loom::gpu_vendor::round_to_odd(v));
}

#endif  // LOOM_GPU_HIP
