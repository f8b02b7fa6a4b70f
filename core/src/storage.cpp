// storage.cpp — allocation through the owning plugin.
#include "device_registry.h"

#include <loom/error.h>
#include <loom/storage.h>

namespace loom {

Storage allocate_storage(Device device, size_t nbytes) {
  const auto& e = detail::device_type(device.type);
  void* ptr = nullptr;
  if (LoomError* err = e.desc.allocate(e.desc.device_data, device.index, nbytes, &ptr)) [[unlikely]] {
    detail::throw_abi_error(err, detail::cat("allocating ", nbytes, " bytes on ", device.str()));
  }
  return Storage(new StorageImpl(device, ptr, nbytes,
                                 StorageDeleter{e.desc.deallocate, e.desc.device_data}));
}

Storage wrap_storage(Device device, void* data, size_t nbytes, StorageDeleter deleter) {
  return Storage(new StorageImpl(device, data, nbytes, deleter));
}

}  // namespace loom
