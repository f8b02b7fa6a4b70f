// sim_memory.hpp — the sim device's memory model.
//
// sim memory is ordinary host memory, but the pointers handed to loom are
// shifted into the non-canonical x86-64 address range: pointer arithmetic
// still works (the core adds byte offsets), yet any attempt by the host to
// read or write sim memory directly — a missing copy — faults at once
// instead of silently working the way it would for a host-memory device.
#pragma once

#include <cstdint>

namespace sim {

inline constexpr uintptr_t kShift = uintptr_t{0x5a} << 56;

inline void* to_device(void* host) { return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(host) + kShift); }
inline void* to_host(const void* dev) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(dev) - kShift);
}

}  // namespace sim
