// See cublas_handle.hpp.
#include "cublas_handle.hpp"

#include "thread_handles.hpp"
#include "vendor/gpu_target.hpp"

#include <loom/plugin.hpp>

#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

void destroy(cublasHandle_t h) { (void)cublasDestroy(h); }
using Handles = ThreadHandles<cublasHandle_t, destroy>;

}  // namespace

void check_cublas(cublasStatus_t s, int index, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) [[likely]]
    return;
  const int32_t code = s == CUBLAS_STATUS_NOT_SUPPORTED ? LOOM_STATUS_UNSUPPORTED
                       : s == CUBLAS_STATUS_ALLOC_FAILED ? LOOM_STATUS_OUT_OF_MEMORY
                                                         : LOOM_STATUS_DEVICE_ERROR;
  throw plugin::Failure(code, LOOM_GPU_NAME ":" + std::to_string(index) + ": " + what + ": " +
                                  cublasGetStatusString(s) + " (status " + std::to_string(static_cast<int>(s)) + ")");
}

cublasHandle_t cublas_handle(int index, cudaStream_t stream) {
  cublasHandle_t& h = Handles::slot(index);
  if (h == nullptr) {
    cublasHandle_t created = nullptr;
    check_cublas(cublasCreate(&created), index, "cublasCreate");
    // Half-precision products accumulate in float all the way through, as
    // on the CPU (cuBLAS may otherwise reduce split-K partials in half).
    const cublasStatus_t s = cublasSetMathMode(created, CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
    if (s != CUBLAS_STATUS_SUCCESS) {
      (void)cublasDestroy(created);
      check_cublas(s, index, "cublasSetMathMode");
    }
    h = created;
  }
  check_cublas(cublasSetStream(h, stream), index, "cublasSetStream");
  return h;
}

}  // namespace loom::LOOM_GPU_NAMESPACE
