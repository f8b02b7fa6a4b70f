// loom/plugin/fused_ops.hpp — plugin_api.h's LOOM_FUSED_OP_LIST as lookups,
// shared by the host (loom/fusion.h) and plugins that compile fused regions
// (the CPU plugin maps a code to its kernel by the op's name). C++17.
#pragma once

#include <loom/plugin_api.h>

#include <cstdint>
#include <string_view>

namespace loom::plugin {

// The catalog op a LOOM_FUSED_* code names ("add" for LOOM_FUSED_ADD);
// nullptr for LOOM_FUSED_INPUT, LOOM_FUSED_CAST and codes this build does
// not know (a newer host's).
constexpr const char* fused_op_name(int32_t code) {
#define LOOM_PLUGIN_FUSED_NAME(CODE, name, value) \
  if (code == value) return name;
  LOOM_FUSED_OP_LIST(LOOM_PLUGIN_FUSED_NAME)
#undef LOOM_PLUGIN_FUSED_NAME
  return nullptr;
}

// The code of a catalog op; -1 when a region cannot hold it.
constexpr int32_t fused_op_code(std::string_view op) {
#define LOOM_PLUGIN_FUSED_CODE(CODE, name, value) \
  if (op == name) return value;
  LOOM_FUSED_OP_LIST(LOOM_PLUGIN_FUSED_CODE)
#undef LOOM_PLUGIN_FUSED_CODE
  return -1;
}

}  // namespace loom::plugin
