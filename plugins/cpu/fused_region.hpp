// The CPU device type's fused_* slots (fused_region.cpp).
#pragma once

#include <loom/plugin.hpp>

namespace loom::cpu {

// Sets fused_compile / fused_run / fused_release in the device type's table.
void fill_fused_slots(LoomDeviceTypeDesc& d);
// Remembers the cpu kernels `r` registered: a fused region's instructions
// run them. Called at the end of init, after every kernel.
void remember_kernels_for_regions(const plugin::Registrar& r);

}  // namespace loom::cpu
