// profiler_hook.h — the dispatcher's side of loom/profiler.h. dispatch()
// reads `active_profile` once per call (an initial-exec thread-local) and
// opens a Scope only while a profile records on this thread.
#pragma once

#include <loom/detail/object_pool.h>  // LOOM_FAST_TLS
#include <loom/profiler.h>

namespace loom::profiler {

struct ProfilerAccess {
  // One call: begins its event (and device mark) on construction, ends it on
  // destruction, also when the call throws.
  class Scope {
   public:
    Scope(Profile& p, const OpCall& call);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    static constexpr size_t kNotRecorded = ~size_t{0};
    Profile& profile_;
    const OpCall* previous_call_;
    size_t index_ = kNotRecorded;
  };
};

namespace detail {
extern constinit thread_local Profile* active_profile LOOM_FAST_TLS;
}  // namespace detail

}  // namespace loom::profiler
