// sim_plugin.cpp — the entry point of the sim test device.
//
// A whole device backend for loom in four small files: the device type
// (memory and copies), its runtime (streams, events, options), kernels, and
// this entry. It links nothing of
// loom but the plugin ABI headers.
#include <loom/plugin.hpp>

namespace sim {
LoomDeviceTypeDesc device_type_desc();
void register_kernels(loom::plugin::Registrar& r);
}  // namespace sim

static void init(loom::plugin::Registrar& r) {
  static const LoomDeviceTypeDesc desc = sim::device_type_desc();
  r.device_type(desc);
  sim::register_kernels(r);
}

LOOM_PLUGIN("sim", "0.1.0", init)
