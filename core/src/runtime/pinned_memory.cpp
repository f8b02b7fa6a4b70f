// pinned_memory.cpp — the registry of live pinned host blocks (see
// pinned_memory.h). Blocks are few and large (staging buffers), so a map
// under a mutex is enough; the common case, no pinned block at all, never
// takes the lock.
#include "pinned_memory.h"

#include "device_registry.h"
#include "plugin_call.h"

#include <loom/error.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

namespace loom::detail {
namespace {

struct Block {
  size_t nbytes;
  int slot;
};

std::mutex blocks_mutex;
std::map<uintptr_t, Block>& blocks() {
  static auto* m = new std::map<uintptr_t, Block>;  // never destroyed: storages may outlive statics
  return *m;
}
std::atomic<size_t> live_blocks{0};

// The storage deleter: forget the block, then give it back to its plugin
// (which keeps it from reuse until copies queued on it are done).
void release_pinned(void* ctx, int32_t, void* ptr, size_t nbytes) {
  const int slot = static_cast<int>(reinterpret_cast<intptr_t>(ctx));
  {
    std::lock_guard lock(blocks_mutex);
    if (blocks().erase(reinterpret_cast<uintptr_t>(ptr))) live_blocks.fetch_sub(1, std::memory_order_relaxed);
  }
  const auto& e = device_type(slot);
  LOOM_DEVICE_SLOT_NOTHROW(e, host_deallocate, ptr, nbytes);
}

}  // namespace

Storage allocate_pinned_storage(int slot, size_t nbytes) {
  const auto& e = device_type(slot);
  if (!e.desc.host_allocate || !e.desc.host_deallocate)
    throw Error(ErrorKind::Unsupported, cat("pin_memory: device type '", e.name, "' has no pinned host memory: ",
                                            e.plugin, " leaves the host_allocate slots of its device type empty"));
  // The slot takes only positive sizes; an empty tensor still gets a block,
  // so that it reports is_pinned() like PyTorch's.
  const size_t block = nbytes ? nbytes : 1;
  void* ptr = nullptr;
  if (LoomError* err = LOOM_DEVICE_SLOT(e, host_allocate, block, &ptr))
    throw_abi_error(err, cat("allocating ", nbytes, " bytes of pinned host memory for ", e.name));
  LOOM_CHECK(ptr, "pin_memory: ", e.plugin, "'s host_allocate returned no memory for ", block, " bytes");
  {
    std::lock_guard lock(blocks_mutex);
    blocks()[reinterpret_cast<uintptr_t>(ptr)] = Block{block, slot};
    live_blocks.fetch_add(1, std::memory_order_relaxed);
  }
  return wrap_storage(cpu_device(), ptr, block,
                      StorageDeleter{&release_pinned, reinterpret_cast<void*>(static_cast<intptr_t>(slot))});
}

int pinned_owner(const void* p) {
  if (live_blocks.load(std::memory_order_relaxed) == 0) return -1;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(blocks_mutex);
  auto it = blocks().upper_bound(addr);
  if (it == blocks().begin()) return -1;
  --it;
  return addr < it->first + it->second.nbytes ? it->second.slot : -1;
}

}  // namespace loom::detail
