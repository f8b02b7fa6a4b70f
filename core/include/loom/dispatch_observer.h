// loom/dispatch_observer.h — watching the calls a program makes, for graph
// capture (loom::jit::trace).
//
// While a DispatchObserver is installed on a thread, every call that reaches
// the dispatcher from outside it is shown to the observer once it has run:
// the op, its tensor arguments, its other arguments and its results. Calls
// made underneath — by a composite, a fallback or the autograd layer — are
// not shown (the observer is lifted for the duration of the outer call), so
// what the observer sees is the program's own sequence of catalog ops.
//
// Untraced programs pay one thread-local load per call for this.
#pragma once

#include <loom/detail/object_pool.h>  // LOOM_FAST_TLS
#include <loom/plugin_api.h>

#include <span>

namespace loom {

struct OpCall;

class DispatchObserver {
 public:
  virtual ~DispatchObserver() = default;
  // `call` has run: call.args as the caller passed them, `values` the
  // non-tensor arguments as the caller passed them (call.values may since
  // have been rewritten by the op's prepare: a dropout's generator=None into
  // the counters it drew), call.outputs[i].result the results (for an
  // in-place op, self; with out=, the out tensors). Not called when the op
  // threw.
  virtual void after(const OpCall& call, std::span<const LoomValue> values) = 0;
};

// Installs `observer` on this thread for the guard's lifetime (guards nest:
// the previous observer comes back when this one ends).
class ObserveDispatch {
 public:
  explicit ObserveDispatch(DispatchObserver& observer);
  ~ObserveDispatch();
  ObserveDispatch(const ObserveDispatch&) = delete;
  ObserveDispatch& operator=(const ObserveDispatch&) = delete;

 private:
  DispatchObserver* previous_;
};

namespace detail {
extern constinit thread_local DispatchObserver* active_observer LOOM_FAST_TLS;
}  // namespace detail

}  // namespace loom
