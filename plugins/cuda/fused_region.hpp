// The CUDA device type's fused_* slots (fused_region.cpp; CUDA only: the
// HIP build has no run-time compiler wired yet, so its regions run op by op).
#pragma once

#include <loom/plugin_api.h>

namespace loom::LOOM_GPU_NAMESPACE {

// Sets fused_compile / fused_run / fused_release in the device type's table.
void fill_fused_slots(LoomDeviceTypeDesc& d);

}  // namespace loom::LOOM_GPU_NAMESPACE
