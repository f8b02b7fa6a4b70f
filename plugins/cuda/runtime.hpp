// The CUDA plugin's process state: which devices exist (and why there are
// none), the calling thread's current device and current stream per device,
// each device's caching allocator, and the plugin-wide options.
//
// Nothing here touches a device before it is asked to: loading the plugin
// on a machine without a GPU or driver costs one cudaGetDeviceCount.
#pragma once

#include "allocator/caching_allocator.hpp"
#include "allocator/pinned_host_pool.hpp"

#include "vendor/gpu_runtime.hpp"

#include <atomic>

namespace loom::LOOM_GPU_NAMESPACE {

// Devices a process can address (a fixed bound keeps per-thread tables flat).
inline constexpr int kMaxDevices = 64;

// Number of usable devices; 0 (never an error) without a GPU or driver.
int device_count() noexcept;
// Why device_count() is 0: the vendor layer's driver check
// (gpu_vendor::missing_driver, e.g. "no NVIDIA driver: libcuda.so.1 not
// found"), else the runtime's own text; a static string.
const char* unavailable_reason() noexcept;

// Throws a plugin::Failure naming `index` unless it is a valid device.
void check_index(int index);

// Makes `index` the calling thread's CUDA device (cudaSetDevice only when it
// changes: the thread remembers what it set).
void use_device(int index);

// The calling thread's current stream on `index`: what loom::StreamGuard set
// through set_current_stream, or nullptr (CUDA's legacy default stream).
cudaStream_t current_stream(int index) noexcept;
void set_current_stream(int index, cudaStream_t stream) noexcept;

// The caching allocator of device `index`, created on first use.
gpu::CachingAllocator& allocator(int index);

// The process's pinned host memory (pinned_host_backend.cpp), created on
// first use; throws a Failure with the reason when there is no device.
gpu::PinnedHostPool& pinned_pool();

// When the fused attention kernels run (option attention_kernels).
enum class AttentionKernels : int {
  Auto,    // only where the composite's L x S scores would not fit (attention.cu)
  Always,  // wherever they can (the device tests of the kernels)
  Never,   // never: the composite always
};

// Plugin-wide options (set_option): TF32 tensor cores for float32 matmul
// and convolutions, off by default as in PyTorch >= 1.12; when the fused
// attention kernels run.
struct Options {
  std::atomic<bool> allow_tf32{false};
  std::atomic<AttentionKernels> attention_kernels{AttentionKernels::Auto};
};
Options& options() noexcept;

}  // namespace loom::LOOM_GPU_NAMESPACE
