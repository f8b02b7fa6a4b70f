// The CPU device type's fused_* slots (fused_region.cpp).
#pragma once

#include <loom/plugin.hpp>

namespace loom::cpu {

// Sets fused_compile / fused_run / fused_release in the device type's table.
void fill_fused_slots(LoomDeviceTypeDesc& d);
// Remembers the cpu kernels `r` registered: a fused region's instructions
// run them. Called at the end of init, after every kernel.
void remember_kernels_for_regions(const plugin::Registrar& r);
// The catalog op of a LOOM_FUSED_* code; nullptr for INPUT, CAST and codes
// this build does not know.
const char* fused_op_name(int32_t code);

}  // namespace loom::cpu
