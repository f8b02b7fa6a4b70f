// mydev_plugin.cpp — the plugin's entry point: loom calls init once, when a
// program first uses a "mydev" tensor, and the plugin declares its device
// type and its kernels.
#include <loom/plugin.hpp>

namespace mydev {
LoomDeviceTypeDesc device_type_desc();
void register_kernels(loom::plugin::Registrar& r);
}  // namespace mydev

static void init(loom::plugin::Registrar& r) {
  static const LoomDeviceTypeDesc desc = mydev::device_type_desc();  // must outlive the plugin
  r.device_type(desc);
  mydev::register_kernels(r);
}

LOOM_PLUGIN("mydev", "0.1.0", init)
