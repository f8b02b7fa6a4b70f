// cuDNN handles for the CUDA plugin: one per (device, thread), created on
// first use and destroyed when the thread exits, as cublas_handle.hpp does
// for cuBLAS (a handle is bound to the device current at creation and must
// not be used by two threads at once). Each call sets the call's stream.
#pragma once

#include "vendor/gpu_runtime.hpp"

#include <cudnn.h>

#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE {

// The calling thread's handle for device `index`, set to `stream`. Makes
// `index` the thread's current device. Throws plugin::Failure (device
// error, naming the device) when cuDNN cannot create one.
cudnnHandle_t cudnn_handle(int index, cudaStream_t stream);

// Throws plugin::Failure naming the device, `what` and cuDNN's own text
// unless `s` is CUDNN_STATUS_SUCCESS. "Not supported" and bad-parameter
// statuses (shapes or strides cuDNN declines) become
// LOOM_STATUS_UNSUPPORTED, so the core falls back instead of failing.
void check_cudnn(cudnnStatus_t s, int index, const char* what);

// A cuDNN descriptor, destroyed with its owner.
template <class D, cudnnStatus_t (*Create)(D*), cudnnStatus_t (*Destroy)(D)>
class CudnnDescriptor {
 public:
  CudnnDescriptor(int index, const char* what) { check_cudnn(Create(&d_), index, what); }
  ~CudnnDescriptor() { (void)Destroy(d_); }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
  D get() const { return d_; }

 private:
  D d_ = nullptr;
};
using TensorDescriptor =
    CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;

// cuDNN's data type for device storage type T (dtype.cuh).
template <class T>
cudnnDataType_t cudnn_data_type() {
  if constexpr (std::is_same_v<T, __half>) return CUDNN_DATA_HALF;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return CUDNN_DATA_BFLOAT16;
  else if constexpr (std::is_same_v<T, float>) return CUDNN_DATA_FLOAT;
  else return CUDNN_DATA_DOUBLE;
}

// The type of cuDNN's alpha/beta blend factors for data of type T, which
// is also the type of batch normalisation's parameters: double for double
// data, float otherwise.
template <class T>
using cudnn_scale_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

}  // namespace loom::LOOM_GPU_NAMESPACE
