// dispatch_trace.cpp — recording which path each dispatched call took
// (loom/dispatch_trace.h).
#include "dispatch_trace_hook.h"

#include <loom/op_call.h>

#include <algorithm>

namespace loom {

namespace detail {
constinit thread_local DispatchTrace* active_trace LOOM_FAST_TLS = nullptr;
}  // namespace detail

const char* to_string(DispatchPath path) {
  switch (path) {
    case DispatchPath::Kernel: return "kernel";
    case DispatchPath::Composite: return "composite";
    case DispatchPath::Fallback: return "fallback";
  }
  return "?";
}

DispatchTrace::DispatchTrace() : previous_(detail::active_trace) { detail::active_trace = this; }

DispatchTrace::~DispatchTrace() { detail::active_trace = previous_; }

DispatchTrace* DispatchTrace::active() { return detail::active_trace; }

bool DispatchTrace::fell_back_on(int device_type) const {
  return std::any_of(events_.begin(), events_.end(), [device_type](const DispatchEvent& e) {
    return e.path == DispatchPath::Fallback && e.device_type == device_type;
  });
}

std::vector<std::string> DispatchTrace::providers() const {
  std::vector<std::string> out;
  for (const auto& e : events_)
    if (std::find(out.begin(), out.end(), e.provider) == out.end()) out.push_back(e.provider);
  return out;
}

void DispatchTraceAccess::record(DispatchTrace& t, const OpCall& call, DispatchPath path,
                                 const std::string& provider, std::string why) {
  t.events_.push_back(DispatchEvent{call.op, call.device.type, path, provider, t.depth_, std::move(why)});
}

}  // namespace loom
