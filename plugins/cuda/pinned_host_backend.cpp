// The pinned host pool's view of CUDA (allocator/pinned_host_pool.hpp):
// cudaHostAlloc (portable: pinned for every device's context), cudaFreeHost,
// and per-copy events recorded on the copy's stream.
#include "allocator/pinned_host_pool.hpp"
#include "cuda_error.hpp"
#include "runtime.hpp"

#include "vendor/gpu_runtime.hpp"

#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

class CudaPinnedBackend final : public gpu::PinnedHostBackend {
 public:
  void* raw_alloc(size_t bytes) override {
    void* p = nullptr;
    const cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // the pool releases its cache and retries
      return nullptr;
    }
    check(e, 0, "cudaHostAlloc");
    return p;
  }
  void raw_free(void* ptr) override { check(cudaFreeHost(ptr), 0, "cudaFreeHost"); }
  Event record_event(int device, Stream stream) override {
    use_device(device);
    cudaEvent_t ev = nullptr;
    check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), device, "cudaEventCreate (pinned copy)");
    check(cudaEventRecord(ev, static_cast<cudaStream_t>(stream)), device, "cudaEventRecord (pinned copy)");
    return ev;
  }
  bool event_done(Event event) override {
    const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    check(e, 0, "cudaEventQuery (pinned copy)");
    return true;
  }
  void release_event(Event event) override { (void)cudaEventDestroy(static_cast<cudaEvent_t>(event)); }
};

}  // namespace

gpu::PinnedHostPool& pinned_pool() {
  if (device_count() == 0)
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED,
                          std::string(LOOM_GPU_NAME ": pinned host memory needs a CUDA device: ") + unavailable_reason());
  // Leaked on purpose, like the device allocators: pinned tensors may be
  // freed by static destructors at exit.
  static auto* backend = new CudaPinnedBackend;
  static auto* pool = new gpu::PinnedHostPool(*backend, LOOM_GPU_NAME);
  return *pool;
}

}  // namespace loom::LOOM_GPU_NAMESPACE
