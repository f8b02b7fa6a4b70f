// dispatch_trace_hook.h — the dispatcher's side of loom/dispatch_trace.h.
// run_prepared reads `active_trace` once per call (an initial-exec
// thread-local: one load from the thread pointer) and records only when a
// trace is active, so untraced dispatch pays nothing else.
#pragma once

#include <loom/detail/object_pool.h>  // LOOM_FAST_TLS
#include <loom/dispatch_trace.h>

#include <string>

namespace loom {

struct OpCall;

struct DispatchTraceAccess {
  static void record(DispatchTrace& t, const OpCall& call, DispatchPath path, const std::string& provider,
                     std::string why = {});
  // Inner calls made while a composite or fallback runs sit one level deeper.
  struct Nested {
    DispatchTrace* trace;
    explicit Nested(DispatchTrace* t) : trace(t) {
      if (trace) ++trace->depth_;
    }
    ~Nested() {
      if (trace) --trace->depth_;
    }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;
  };
};

namespace detail {
extern constinit thread_local DispatchTrace* active_trace LOOM_FAST_TLS;
}  // namespace detail

}  // namespace loom
