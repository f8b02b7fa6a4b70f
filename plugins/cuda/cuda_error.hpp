// Turning CUDA runtime errors into plugin failures (loom::plugin::Failure,
// which the entry-point guard turns into a LoomError) that name the call
// and CUDA's own text, e.g.
//   "cuda:0: cudaMemcpyAsync (copy_to_host, 4096 bytes): an illegal memory access was encountered"
#pragma once

#include <loom/plugin.hpp>

#include "vendor/gpu_runtime.hpp"

#include <string>

namespace loom::LOOM_GPU_NAMESPACE {

// The status a CUDA error maps to: allocation failures are
// LOOM_STATUS_OUT_OF_MEMORY, everything else a device error.
inline int32_t status_of(cudaError_t e) {
  return e == cudaErrorMemoryAllocation ? LOOM_STATUS_OUT_OF_MEMORY : LOOM_STATUS_DEVICE_ERROR;
}

[[noreturn]] inline void throw_cuda(cudaError_t e, int device, const std::string& what) {
  (void)cudaGetLastError();  // reset the last-error slot so the next call is not blamed for this one
  throw plugin::Failure(status_of(e), LOOM_GPU_NAME ":" + std::to_string(device) + ": " + what + ": " +
                                          cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
}

// Throws unless `e` is cudaSuccess.
inline void check(cudaError_t e, int device, const char* what) {
  if (e != cudaSuccess) [[unlikely]]
    throw_cuda(e, device, what);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
