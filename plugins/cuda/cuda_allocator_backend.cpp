// See cuda_allocator_backend.hpp.
#include "cuda_allocator_backend.hpp"

#include "cuda_error.hpp"
#include "runtime.hpp"

#include "vendor/gpu_runtime.hpp"

namespace loom::LOOM_GPU_NAMESPACE {

void* CudaAllocatorBackend::raw_alloc(size_t bytes) {
  use_device(device_);
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // the allocator retries or reports with sizes
    return nullptr;
  }
  check(e, device_, "cudaMalloc");
  return p;
}

void CudaAllocatorBackend::raw_free(void* ptr) {
  use_device(device_);
  check(cudaFree(ptr), device_, "cudaFree");
}

void CudaAllocatorBackend::mem_info(size_t* free, size_t* total) {
  use_device(device_);
  if (cudaMemGetInfo(free, total) != cudaSuccess) {
    (void)cudaGetLastError();
    *free = *total = 0;
  }
}

gpu::AllocatorBackend::Event CudaAllocatorBackend::record_event(Stream stream) {
  use_device(device_);
  cudaEvent_t ev = nullptr;
  {
    std::lock_guard lock(mu_);
    if (!spare_events_.empty()) {
      ev = static_cast<cudaEvent_t>(spare_events_.back());
      spare_events_.pop_back();
    }
  }
  if (ev == nullptr) check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), device_, "cudaEventCreate");
  check(cudaEventRecord(ev, static_cast<cudaStream_t>(stream)), device_, "cudaEventRecord");
  return ev;
}

bool CudaAllocatorBackend::event_done(Event event) {
  const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  check(e, device_, "cudaEventQuery");
  return true;
}

void CudaAllocatorBackend::release_event(Event event) {
  std::lock_guard lock(mu_);
  spare_events_.push_back(event);
}

void CudaAllocatorBackend::synchronize() {
  use_device(device_);
  check(cudaDeviceSynchronize(), device_, "cudaDeviceSynchronize");
}

}  // namespace loom::LOOM_GPU_NAMESPACE
