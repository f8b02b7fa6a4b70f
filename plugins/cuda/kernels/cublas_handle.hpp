// cuBLAS handles for the CUDA plugin: one per (device, thread), created on
// first use and destroyed when the thread exits. A cuBLAS handle is not
// safe to share between threads that call it at once, and it is bound to
// the device current when it was created, hence the two keys. Each call
// sets the handle to the call's stream first.
#pragma once

#include "vendor/gpu_runtime.hpp"

#include <cublas_v2.h>

namespace loom::LOOM_GPU_NAMESPACE {

// The calling thread's handle for device `index`, set to `stream`. Makes
// `index` the thread's current device. Throws plugin::Failure (device
// error, naming the device) when cuBLAS cannot create one.
cublasHandle_t cublas_handle(int index, cudaStream_t stream);

// Throws plugin::Failure naming the device, `what` and cuBLAS's own text
// unless `s` is CUBLAS_STATUS_SUCCESS. CUBLAS_STATUS_NOT_SUPPORTED becomes
// LOOM_STATUS_UNSUPPORTED, so the core falls back instead of failing.
void check_cublas(cublasStatus_t s, int index, const char* what);

}  // namespace loom::LOOM_GPU_NAMESPACE
