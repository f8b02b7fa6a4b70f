// loom/plugin/comm_op_name.hpp — the name of a communication ABI op code
// (loom/comm_api.h's LOOM_COMM_*), for communication plugins' messages.
#pragma once

#include <loom/comm_api.h>

#include <cstdint>

namespace loom::plugin {

// "all_reduce", ...; nullptr for a code this header does not know.
inline const char* comm_op_name(int32_t op) {
  switch (op) {
    case LOOM_COMM_ALL_REDUCE: return "all_reduce";
    case LOOM_COMM_BROADCAST: return "broadcast";
    case LOOM_COMM_REDUCE: return "reduce";
    case LOOM_COMM_ALL_GATHER: return "all_gather";
    case LOOM_COMM_REDUCE_SCATTER: return "reduce_scatter";
    case LOOM_COMM_ALL_TO_ALL: return "all_to_all";
    case LOOM_COMM_GATHER: return "gather";
    case LOOM_COMM_SCATTER: return "scatter";
    case LOOM_COMM_BARRIER: return "barrier";
    case LOOM_COMM_SEND: return "send";
    case LOOM_COMM_RECV: return "recv";
    default: return nullptr;
  }
}

}  // namespace loom::plugin
