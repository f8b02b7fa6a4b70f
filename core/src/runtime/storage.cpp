// storage.cpp — allocation through the owning plugin.
#include "device_registry.h"
#include "plugin_call.h"

#include <loom/error.h>
#include <loom/storage.h>

namespace loom {

namespace {
void deallocate_through_plugin(void* ctx, int32_t index, void* ptr, size_t nbytes) {
  const auto& e = *static_cast<const detail::DeviceTypeEntry*>(ctx);
  LOOM_DEVICE_SLOT_NOTHROW(e, deallocate, index, ptr, nbytes);
}
}  // namespace

Storage allocate_storage(Device device, size_t nbytes) {
  const auto& e = detail::device_type(device.type);
  void* ptr = nullptr;
  auto context = [&] {
    return detail::cat("allocating ", nbytes, " bytes on ", device.str(), ": allocate of ", e.plugin);
  };
  if (LoomError* err = detail::call_plugin(context, e.desc.allocate, e.desc.device_data,
                                           device.index, nbytes, &ptr)) [[unlikely]] {
    detail::throw_abi_error(err, detail::cat("allocating ", nbytes, " bytes on ", device.str()));
  }
  // The deleter goes through the core (ctx: the entry, which lives until
  // exit) so that an exception escaping the plugin's deallocate is reported
  // instead of terminating in ~StorageImpl.
  return Storage(new StorageImpl(
      device, ptr, nbytes, StorageDeleter{&deallocate_through_plugin, const_cast<detail::DeviceTypeEntry*>(&e)}));
}

Storage wrap_storage(Device device, void* data, size_t nbytes, StorageDeleter deleter) {
  return Storage(new StorageImpl(device, data, nbytes, deleter));
}

}  // namespace loom
