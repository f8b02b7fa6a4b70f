// Temporary device memory for one kernel call (workspaces, staged or
// contiguous copies): blocks of the device's caching allocator, all freed
// when the call's Blocks goes out of scope. Freeing is stream-ordered: a
// block is reused on this stream only after the work queued here, so no
// synchronisation is needed before the destructor runs.
#pragma once

#include "../runtime.hpp"

#include "vendor/gpu_runtime.hpp"

#include <cstddef>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE {

class Blocks {
 public:
  Blocks(int index, cudaStream_t stream) : allocator_(allocator(index)), stream_(stream) {}
  Blocks(const Blocks&) = delete;
  Blocks& operator=(const Blocks&) = delete;
  ~Blocks() {
    for (void* b : blocks_) allocator_.free(b);
  }
  // A block of `bytes` (nullptr for 0), valid until the destructor.
  void* get(size_t bytes) {
    if (bytes == 0) return nullptr;
    blocks_.push_back(allocator_.allocate(bytes, stream_));
    return blocks_.back();
  }

 private:
  gpu::CachingAllocator& allocator_;
  cudaStream_t stream_;
  std::vector<void*> blocks_;
};

}  // namespace loom::LOOM_GPU_NAMESPACE
