// pinned_memory.h (core-internal) — page-locked host memory from a device
// type's host_allocate slot (ABI 1.3), and which device type a host pointer
// is pinned for.
//
// Copies between pinned memory and its device type may stay queued on a
// stream after the plugin returns (the ABI's copy contract), so copy_bytes
// asks pinned_owner() of every host pointer it hands to a plugin that has
// the slot; one relaxed atomic load answers "nothing is pinned".
#pragma once

#include <loom/storage.h>

#include <cstddef>

namespace loom::detail {

// `nbytes` of pinned host memory from device type `slot`'s plugin, as a
// storage on the CPU device. Throws naming the type when its plugin offers
// no pinned memory, and the plugin's out-of-memory message on failure.
Storage allocate_pinned_storage(int slot, size_t nbytes);

// The device type slot whose host_allocate gave the live block `p` lies in,
// or -1 for any other memory.
int pinned_owner(const void* p);

}  // namespace loom::detail
