// host_copy.h (distributed-internal) — communication for devices without a
// communication plugin of their own: their tensors go through host (cpu)
// copies over a cpu backend (gloo), counted and warned about as the CPU
// fallback of an op is (LOOM_FALLBACK=allow|warn|error).
#pragma once

#include <string>

namespace loom::distributed::detail {

// Whether some installed communication plugin moves `device_type`'s tensors
// (loads the communication plugins it has to ask).
bool has_comm_plugin_for(const std::string& device_type);

// Records that `op` communicates a `device_type` tensor through host copies
// over `backend`: counts it, warns once per op and device type under
// LOOM_FALLBACK=warn, and throws under LOOM_FALLBACK=error (naming the op,
// the device and the backend).
void note_host_copy(const char* op, const std::string& device_type, const std::string& backend);

}  // namespace loom::distributed::detail
