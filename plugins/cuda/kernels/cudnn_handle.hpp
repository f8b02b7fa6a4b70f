// cuDNN handles for the CUDA plugin: one per (device, thread), created on
// first use and destroyed when the thread exits, as cublas_handle.hpp does
// for cuBLAS (a handle is bound to the device current at creation and must
// not be used by two threads at once). Each call sets the call's stream.
#pragma once

#include <cudnn.h>

namespace loom::cuda {

// The calling thread's handle for device `index`, set to `stream`. Makes
// `index` the thread's current device. Throws plugin::Failure (device
// error, naming the device) when cuDNN cannot create one.
cudnnHandle_t cudnn_handle(int index, cudaStream_t stream);

// Throws plugin::Failure naming the device, `what` and cuDNN's own text
// unless `s` is CUDNN_STATUS_SUCCESS. "Not supported" and bad-parameter
// statuses (shapes or strides cuDNN declines) become
// LOOM_STATUS_UNSUPPORTED, so the core falls back instead of failing.
void check_cudnn(cudnnStatus_t s, int index, const char* what);

}  // namespace loom::cuda
