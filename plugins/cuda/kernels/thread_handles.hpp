// Library handles (cuBLAS, cuDNN) one per (device, thread): a handle is
// bound to the device current when it was created and must not be used by
// two threads at once. The table belongs to its thread and destroys its
// handles when the thread exits, so a worker that ends gives them (and
// their workspaces) back.
#pragma once

#include "../runtime.hpp"
#include "vendor/gpu_target.hpp"

#include <array>

namespace loom::LOOM_GPU_NAMESPACE {

// Destroy: void(Handle), called with the handle's device current; failures
// at exit (driver already shutting down) have nobody to report to.
template <class Handle, void (*Destroy)(Handle)>
struct ThreadHandles {
  std::array<Handle, kMaxDevices> handle{};

  ~ThreadHandles() {
    for (int d = 0; d < kMaxDevices; ++d)
      if (handle[static_cast<size_t>(d)] != nullptr && cudaSetDevice(d) == cudaSuccess)
        Destroy(handle[static_cast<size_t>(d)]);
  }

  // The calling thread's slot for device `index` (nullptr until created);
  // checks the index and makes the device current.
  static Handle& slot(int index) {
    check_index(index);
    use_device(index);
    thread_local ThreadHandles table;
    return table.handle[static_cast<size_t>(index)];
  }
};

}  // namespace loom::LOOM_GPU_NAMESPACE
