// loom/dispatch_trace.h — which path each op call took, for tools that must
// know whether a device really ran an op itself.
//
// While a DispatchTrace is alive on a thread, every call through the
// dispatcher on that thread (composites' inner calls and the CPU fallback's
// own CPU call included) appends one event: the op, the device type, how it
// ran (the device's kernel, the op's composite, or a fallback) and who
// provided the code. loom-conformance wraps each case in one to report a
// case served by the CPU fallback as FALLBACK rather than a native pass:
//
//   loom::DispatchTrace trace;
//   auto y = x.matmul(w);                        // x, w on "sim"
//   if (trace.fell_back_on(x.device().type)) ... // matmul went through the CPU
//
// Recording costs one thread-local load per call when no trace is active.
// Traces nest: an inner trace sees only the calls made while it is alive,
// and the outer one resumes when it ends. A trace belongs to the thread that
// made it and must be destroyed there (it is a scope guard).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

class OpDef;

enum class DispatchPath : uint8_t {
  Kernel,     // the device's own kernel ran
  Composite,  // the op's composite ran (its inner calls are traced too)
  Fallback,   // the device's boxed fallback or the host's CPU fallback ran
};
// "kernel", "composite", "fallback".
const char* to_string(DispatchPath path);

struct DispatchEvent {
  const OpDef* op = nullptr;   // never freed: catalog entries live forever
  int device_type = -1;        // the device slot the call ran for
  DispatchPath path = DispatchPath::Kernel;
  std::string provider;        // "plugin 'cpu'", "core composite", "CPU fallback" ...
  int depth = 0;               // nesting below the outermost traced call
  // Fallback events: why the device's own code did not run ("op 'add' has a
  // kernel on device 'x' for float32 but not for dtype float16", "the kernel
  // for op 'sum' ... declined this float32 call: <its reason>"); else "".
  std::string why;
};

class DispatchTrace {
 public:
  DispatchTrace();
  ~DispatchTrace();
  DispatchTrace(const DispatchTrace&) = delete;
  DispatchTrace& operator=(const DispatchTrace&) = delete;

  const std::vector<DispatchEvent>& events() const { return events_; }
  // Whether any call ran through a fallback on device slot `device_type`
  // (at any depth: a composite whose inner op fell back counts).
  bool fell_back_on(int device_type) const;
  // The distinct providers that ran something, in first-seen order.
  std::vector<std::string> providers() const;
  void clear() { events_.clear(); }

  // The trace recording on this thread, or nullptr.
  static DispatchTrace* active();

 private:
  friend struct DispatchTraceAccess;
  DispatchTrace* previous_;
  std::vector<DispatchEvent> events_;
  int depth_ = 0;
};

}  // namespace loom
