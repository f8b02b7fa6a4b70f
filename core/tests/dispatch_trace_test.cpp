// DispatchTrace (loom/dispatch_trace.h): which path each call took. This is
// what lets loom-conformance tell a native pass from a CPU fallback.
#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/loom.h>

namespace {
bool has_event(const loom::DispatchTrace& t, const std::string& op, loom::DispatchPath path, int slot) {
  for (const auto& e : t.events())
    if (e.op->name() == op && e.path == path && e.device_type == slot) return true;
  return false;
}
}  // namespace

TEST_CASE("no trace is active unless one is alive on the thread") {
  CHECK(loom::DispatchTrace::active() == nullptr);
  {
    loom::DispatchTrace outer;
    CHECK(loom::DispatchTrace::active() == &outer);
    {
      loom::DispatchTrace inner;
      CHECK(loom::DispatchTrace::active() == &inner);
      auto a = loom::ones({2});
      (void)(a + a);
      CHECK_FALSE(inner.events().empty());
    }
    CHECK(loom::DispatchTrace::active() == &outer);
    CHECK(outer.events().empty());  // the inner trace took those calls
  }
  CHECK(loom::DispatchTrace::active() == nullptr);
}

TEST_CASE("a CPU kernel is traced as a kernel of the cpu plugin") {
  auto a = loom::ones({3});
  loom::DispatchTrace trace;
  (void)(a + a);
  REQUIRE(trace.events().size() == 1);
  const auto& e = trace.events()[0];
  CHECK(e.op->name() == "add");
  CHECK(e.path == loom::DispatchPath::Kernel);
  CHECK(e.device_type == a.device().type);
  CHECK(e.provider.find("cpu") != std::string::npos);
  CHECK_FALSE(trace.fell_back_on(a.device().type));
}

TEST_CASE("sim's native add is a kernel; its matmul is a fallback on sim") {
  loom::Device sim("sim");
  auto a = loom::ones({2, 2}).to(sim);
  {
    loom::DispatchTrace trace;
    (void)(a + a);
    CHECK(has_event(trace, "add", loom::DispatchPath::Kernel, sim.type));
    CHECK_FALSE(trace.fell_back_on(sim.type));
    CHECK(trace.providers() == std::vector<std::string>{"plugin 'sim'"});
  }
  {
    loom::DispatchTrace trace;
    (void)a.matmul(a);
    CHECK(trace.fell_back_on(sim.type));
    CHECK(has_event(trace, "matmul", loom::DispatchPath::Fallback, sim.type));
    // The fallback's own CPU call is traced one level deeper.
    bool cpu_inner = false;
    for (const auto& e : trace.events())
      cpu_inner |= e.device_type == loom::cpu_device().type && e.depth == 1;
    CHECK(cpu_inner);
  }
}

TEST_CASE("a composite whose inner op falls back counts as a fallback on the device") {
  loom::Device sim("sim");
  // clamp_ on sim has no kernel, nor has clamp: its composite runs clamp
  // and then copy_ into self (neither native on sim: both fall back).
  auto a = loom::ones({4}).to(sim);
  loom::DispatchTrace trace;
  a.clamp_(0.0, 0.5);
  CHECK(has_event(trace, "clamp_", loom::DispatchPath::Composite, sim.type));
  CHECK(trace.fell_back_on(sim.type));
  int max_depth = 0;
  for (const auto& e : trace.events()) max_depth = std::max(max_depth, e.depth);
  CHECK(max_depth >= 1);
}
