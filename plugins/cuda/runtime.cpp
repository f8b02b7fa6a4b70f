// See runtime.hpp.
#include "runtime.hpp"

#include "cuda_allocator_backend.hpp"
#include "cuda_error.hpp"
#include "vendor/gpu_target.hpp"

#include <array>
#include <memory>
#include <mutex>
#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

struct Discovery {
  int count = 0;
  std::string reason;
};

// The runtime's device count, once, after the vendor layer's driver check
// (which gives the real reason where the runtime's own error would not).
const Discovery& discovery() {
  static const Discovery d = [] {
    Discovery r;
    if (const char* missing = gpu_vendor::missing_driver()) {
      r.reason = missing;
      return r;
    }
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      r.reason = std::string(gpu_vendor::kRuntimeName) + " reports no usable device: " + cudaGetErrorString(e) +
                 " (" + cudaGetErrorName(e) + ")";
      return r;
    }
    r.count = n < kMaxDevices ? n : kMaxDevices;
    if (n == 0) r.reason = gpu_vendor::kDriverFoundNoDevice;
    return r;
  }();
  return d;
}

struct ThreadState {
  int device = -1;  // what this thread last passed to cudaSetDevice
  std::array<cudaStream_t, kMaxDevices> streams{};
};

ThreadState& thread_state() noexcept {
  thread_local ThreadState s;
  return s;
}

}  // namespace

int device_count() noexcept {
  try {
    return discovery().count;
  } catch (...) {
    return 0;
  }
}

const char* unavailable_reason() noexcept {
  try {
    return discovery().reason.c_str();
  } catch (...) {
    return "CUDA device discovery failed";
  }
}

void check_index(int index) {
  if (index < 0 || index >= device_count())
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT,
                          LOOM_GPU_NAME ": device index " + std::to_string(index) + " is out of range (" +
                              std::to_string(device_count()) + " device(s))");
}

void use_device(int index) {
  ThreadState& s = thread_state();
  if (s.device == index) return;
  check_index(index);
  check(cudaSetDevice(index), index, "cudaSetDevice");
  s.device = index;
}

cudaStream_t current_stream(int index) noexcept {
  return index >= 0 && index < kMaxDevices ? thread_state().streams[static_cast<size_t>(index)] : nullptr;
}

void set_current_stream(int index, cudaStream_t stream) noexcept {
  if (index >= 0 && index < kMaxDevices) thread_state().streams[static_cast<size_t>(index)] = stream;
}

gpu::CachingAllocator& allocator(int index) {
  check_index(index);
  // Leaked on purpose: blocks may be freed by static destructors at exit,
  // after a destroyed allocator would have released the device.
  struct Slot {
    std::once_flag once;
    CudaAllocatorBackend* backend = nullptr;
    gpu::CachingAllocator* allocator = nullptr;
  };
  static std::array<Slot, kMaxDevices>* slots = new std::array<Slot, kMaxDevices>();
  Slot& s = (*slots)[static_cast<size_t>(index)];
  std::call_once(s.once, [&] {
    s.backend = new CudaAllocatorBackend(index);
    s.allocator = new gpu::CachingAllocator(*s.backend, index, gpu_vendor::kRuntimeName);
  });
  return *s.allocator;
}

Options& options() noexcept {
  static Options o;
  return o;
}

}  // namespace loom::LOOM_GPU_NAMESPACE
