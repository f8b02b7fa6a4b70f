// See cudnn_handle.hpp.
#include "cudnn_handle.hpp"

#include "thread_handles.hpp"
#include "vendor/gpu_target.hpp"

#include <loom/plugin.hpp>

#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

void destroy(cudnnHandle_t h) { (void)cudnnDestroy(h); }
using Handles = ThreadHandles<cudnnHandle_t, destroy>;

// cuDNN 9 groups its statuses by thousands: the BAD_PARAM (2xxx) and
// NOT_SUPPORTED (3xxx) families are configurations it declines (a stride
// layout, a size past its int range), not broken devices.
bool is_decline(cudnnStatus_t s) { return s >= CUDNN_STATUS_BAD_PARAM && s < CUDNN_STATUS_INTERNAL_ERROR; }

bool is_allocation_failure(cudnnStatus_t s) {
  return s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
         s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
}

}  // namespace

void check_cudnn(cudnnStatus_t s, int index, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) [[likely]]
    return;
  const int32_t code = is_decline(s)                        ? LOOM_STATUS_UNSUPPORTED
                       : is_allocation_failure(s) ? LOOM_STATUS_OUT_OF_MEMORY
                                                        : LOOM_STATUS_DEVICE_ERROR;
  throw plugin::Failure(code, LOOM_GPU_NAME ":" + std::to_string(index) + ": " + what + ": " + cudnnGetErrorString(s) +
                                  " (status " + std::to_string(static_cast<int>(s)) + ")");
}

cudnnHandle_t cudnn_handle(int index, cudaStream_t stream) {
  cudnnHandle_t& h = Handles::slot(index);
  if (h == nullptr) {
    cudnnHandle_t created = nullptr;
    check_cudnn(cudnnCreate(&created), index, "cudnnCreate");
    h = created;
  }
  check_cudnn(cudnnSetStream(h, stream), index, "cudnnSetStream");
  return h;
}

}  // namespace loom::LOOM_GPU_NAMESPACE
