// loom/storage.h — a refcounted block of device memory.
//
// Memory comes from the owning device type's allocator (a plugin function)
// and goes back through its deallocate; views of one storage share it.
#pragma once

#include <loom/detail/intrusive_ptr.h>
#include <loom/detail/object_pool.h>
#include <loom/device.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace loom {

// How a storage gives its memory back: fn(ctx, device_index, ptr, nbytes).
struct StorageDeleter {
  void (*fn)(void* ctx, int32_t device_index, void* ptr, size_t nbytes) = nullptr;
  void* ctx = nullptr;
};

class StorageImpl : public detail::RefCounted, public detail::Pooled<StorageImpl> {
 public:
  StorageImpl(Device device, void* data, size_t nbytes, StorageDeleter deleter)
      : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter) {}
  ~StorageImpl() {
    if (deleter_.fn) deleter_.fn(deleter_.ctx, device_.index, data_, nbytes_);
  }

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  // Bumped by every in-place write through any view, so autograd can tell
  // that a tensor it saved was modified.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  StorageDeleter deleter_;
  std::atomic<uint32_t> version_{0};
};

using Storage = detail::IntrusivePtr<StorageImpl>;

// Allocates nbytes on `device` through its plugin's allocator. Throws
// loom::Error(OutOfMemory) carrying the plugin's message on failure.
Storage allocate_storage(Device device, size_t nbytes);

// Wraps memory the caller owns; `deleter` (may be empty) runs when the last
// reference goes.
Storage wrap_storage(Device device, void* data, size_t nbytes, StorageDeleter deleter);

}  // namespace loom
