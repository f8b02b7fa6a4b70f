// loom/plugin/memory_stats.hpp — a plugin's memory_stats slot answer,
// written field by field into the host's LoomMemoryStats: only the fields
// the host's struct has (its struct_size), so a plugin built against a newer
// header never writes past an older host's struct.
#pragma once

#include <loom/plugin_api.h>

namespace loom::plugin {

inline void write_memory_stats(const LoomMemoryStats& s, LoomMemoryStats* out) {
  if (LOOM_STRUCT_HAS(out, LoomMemoryStats, allocated_bytes)) out->allocated_bytes = s.allocated_bytes;
  if (LOOM_STRUCT_HAS(out, LoomMemoryStats, max_allocated_bytes)) out->max_allocated_bytes = s.max_allocated_bytes;
  if (LOOM_STRUCT_HAS(out, LoomMemoryStats, reserved_bytes)) out->reserved_bytes = s.reserved_bytes;
  if (LOOM_STRUCT_HAS(out, LoomMemoryStats, max_reserved_bytes)) out->max_reserved_bytes = s.max_reserved_bytes;
  if (LOOM_STRUCT_HAS(out, LoomMemoryStats, num_allocs)) out->num_allocs = s.num_allocs;
  if (LOOM_STRUCT_HAS(out, LoomMemoryStats, num_cache_hits)) out->num_cache_hits = s.num_cache_hits;
  if (LOOM_STRUCT_HAS(out, LoomMemoryStats, num_device_allocs)) out->num_device_allocs = s.num_device_allocs;
  if (LOOM_STRUCT_HAS(out, LoomMemoryStats, num_ooms)) out->num_ooms = s.num_ooms;
}

}  // namespace loom::plugin
