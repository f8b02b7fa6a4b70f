// Profile (loom/profiler.h): every op call on the thread, its host time,
// its device time where the device has events, nesting and summaries.
#include <catch2/catch.hpp>
#include <loom/loom.h>
#include <loom/profiler.h>

#include <algorithm>

namespace {
using loom::profiler::OpEvent;
using loom::profiler::Profile;

const OpEvent* find(const Profile& p, const std::string& name) {
  for (const auto& e : p.events())
    if (e.name == name) return &e;
  return nullptr;
}
}  // namespace

TEST_CASE("a profile records each op call with its device and host time") {
  auto a = loom::ones({64, 64});
  Profile prof;
  auto c = a.matmul(a) + a;
  (void)c.sum();
  prof.stop();
  for (const char* op : {"matmul", "add", "sum"}) {
    const OpEvent* e = find(prof, op);
    REQUIRE(e != nullptr);
    CHECK(e->device == loom::cpu_device());
    CHECK(e->depth == 0);
    CHECK(e->end_ns >= e->start_ns);
    CHECK(e->device_ms < 0);  // the CPU has no events: host time is its time
  }
  const size_t n = prof.events().size();
  (void)(a + a);  // after stop: not recorded
  CHECK(prof.events().size() == n);
}

TEST_CASE("inner calls are one level deeper and leave the caller's self time") {
  loom::Device sim("sim");
  auto a = loom::ones({4}).to(sim);
  Profile prof;
  a.clamp_(0.0, 0.5);  // on sim: clamp_'s composite runs clamp and a copy_, both through the CPU
  prof.stop();
  const OpEvent* outer = find(prof, "clamp_");
  REQUIRE(outer != nullptr);
  CHECK(outer->depth == 0);
  const OpEvent* inner = find(prof, "clamp");
  REQUIRE(inner != nullptr);
  CHECK(inner->depth == 1);
  CHECK(inner->start_ns >= outer->start_ns);
  CHECK(inner->end_ns <= outer->end_ns);
  const auto stats = prof.key_averages();
  auto it = std::find_if(stats.begin(), stats.end(), [](const auto& s) { return s.name == "clamp_"; });
  REQUIRE(it != stats.end());
  CHECK(it->host_self_ms <= it->host_total_ms);
  CHECK(it->host_self_ms >= 0);
}

TEST_CASE("a device with events gives each call a device time") {
  loom::Device sim("sim");
  auto a = loom::ones({8}).to(sim);
  Profile prof;
  (void)(a * a);
  prof.stop();
  const OpEvent* e = find(prof, "mul");
  REQUIRE(e != nullptr);
  CHECK(e->device == sim);
  CHECK(e->device_ms >= 0);
  const auto stats = prof.key_averages();
  REQUIRE_FALSE(stats.empty());
  CHECK(stats.front().device_ms >= 0);  // sorted by device time when there is one
  CHECK_THAT(prof.table(), Catch::Contains("device time:"));
}

TEST_CASE("backward's ops are recorded, and key_averages counts calls") {
  auto x = loom::ones({3, 3}).requires_grad_();
  Profile prof;
  for (int i = 0; i < 3; ++i) (x * x).sum().backward();
  prof.stop();
  const auto stats = prof.key_averages(Profile::SortBy::Calls);
  auto count = [&](const std::string& name) {
    for (const auto& s : stats)
      if (s.name == name) return s.calls;
    return int64_t{0};
  };
  CHECK(count("sum") >= 3);  // the forward sums (backward may sum too)
  // An op that records a grad_fn is one call, not one for the autograd layer
  // and one for the run below it.
  Profile once;
  (void)(x * x);
  once.stop();
  REQUIRE(once.events().size() == 1);
  CHECK(once.events()[0].name == "mul");
  CHECK(count("mul") >= 6);  // 3 forward, and backward's grad * x at least once per step
  for (size_t i = 1; i < stats.size(); ++i) CHECK(stats[i - 1].calls >= stats[i].calls);
}

TEST_CASE("the table lists ops by total time, with a row limit and a total line") {
  auto a = loom::ones({32, 32});
  Profile prof;
  (void)a.matmul(a);
  (void)(a + a);
  (void)a.relu();
  prof.stop();
  const std::string t = prof.table(2, Profile::SortBy::HostTotal);
  CHECK_THAT(t, Catch::Contains("Name") && Catch::Contains("Host total") && Catch::Contains("Calls"));
  CHECK_THAT(t, Catch::Contains("(1 more ops)"));
  CHECK_THAT(t, Catch::Contains("Host time in ops:"));
  const auto stats = prof.key_averages(Profile::SortBy::HostTotal);
  for (size_t i = 1; i < stats.size(); ++i) CHECK(stats[i - 1].host_total_ms >= stats[i].host_total_ms);
}

TEST_CASE("profiles nest, record_function ranges hold their ops, and a throwing op still ends its event") {
  auto a = loom::ones({2, 3});
  Profile outer;
  {
    Profile inner;
    (void)(a + a);
    inner.stop();
    CHECK(find(inner, "add") != nullptr);
  }
  {
    loom::profiler::RecordFunction range("my block");
    (void)a.exp();
  }
  CHECK_THROWS(a.matmul(a));  // [2, 3] @ [2, 3]: shapes do not fit
  (void)a.neg();
  outer.stop();
  CHECK(find(outer, "add") == nullptr);  // the inner profile took it
  const OpEvent* range = find(outer, "my block");
  const OpEvent* exp = find(outer, "exp");
  REQUIRE(range != nullptr);
  REQUIRE(exp != nullptr);
  CHECK(range->depth == 0);
  CHECK(exp->depth == 1);
  const OpEvent* neg = find(outer, "neg");
  REQUIRE(neg != nullptr);
  CHECK(neg->depth == 0);  // the failed matmul's event ended and gave its level back
}
