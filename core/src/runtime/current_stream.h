// current_stream.h (core-internal) — the per-thread current stream of each
// device, read by the dispatcher and by copies.
//
// The hot path reads one initial-exec thread-local: a pointer that stays
// null until the thread first makes a non-default stream current, so a
// program that never uses streams pays one load and a predictable branch per
// kernel. The table it points to is owned by stream.cpp (one per thread,
// freed at thread exit, which nulls the pointer first).
#pragma once

#include <loom/detail/object_pool.h>  // LOOM_FAST_TLS
#include <loom/device.h>

namespace loom::detail {

// Devices per type that may have a non-default current stream (CUDA nodes
// have 8 or 16 GPUs; the table stays 16 KiB).
inline constexpr int kMaxStreamDevices = 64;

struct CurrentStreamTable {
  void* handle[kMaxDeviceTypes][kMaxStreamDevices] = {};  // nullptr: default stream
};

extern constinit thread_local const CurrentStreamTable* current_streams LOOM_FAST_TLS;

// The plugin handle of this thread's current stream on `d` (nullptr for the
// default stream). Precondition: d.type is a registered slot.
inline void* current_stream_handle(Device d) noexcept {
  const CurrentStreamTable* table = current_streams;
  if (!table) [[likely]] return nullptr;
  return static_cast<unsigned>(d.index) < static_cast<unsigned>(kMaxStreamDevices)
             ? table->handle[d.type][d.index]
             : nullptr;
}

}  // namespace loom::detail
