// ShmGroup (plugins/gloo/shm_group.hpp) driven directly, in fork()ed
// processes that meet through a gloo FileStore: the failure semantics the
// collectives tests cannot set up through the host (which numbers every
// collective itself) — a group that failed on one rank must fail on every
// rank, never pair one rank's next collective with a late peer's previous
// one; a peer that exits is named at once; abort() ends a wait in progress.
#define CATCH_CONFIG_MAIN
#include "../shm_group.hpp"

#include <catch2/catch.hpp>
#include <gloo/rendezvous/file_store.h>
#include <loom/plugin.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using loom::gloo_plugin::ShmGroup;
using Clock = ShmGroup::Clock;
using namespace std::chrono_literals;

// What one rank does with its group; its exit status: 0 when every
// expectation held (it prints the first that did not).
using RankBody = std::function<int(ShmGroup&, int rank)>;

int expect(bool ok, int rank, const std::string& what) {
  if (!ok) std::fprintf(stderr, "rank %d: expected %s\n", rank, what.c_str());
  return ok ? 0 : 1;
}

// Runs `world` processes, each making a group through a fresh FileStore
// directory and running `body`; returns their exit statuses (-1: killed or
// still running after 60 s).
// `setup` runs in each rank's process before it makes its group.
std::vector<int> run_ranks(int world, const RankBody& body, const std::vector<std::string>& env = {},
                           const std::function<void(int rank)>& setup = nullptr) {
  const auto dir = std::filesystem::temp_directory_path() / ("loom_shm_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);  // for a rank run as another user
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (static_cast<size_t>(r) < env.size() && !env[static_cast<size_t>(r)].empty())
        ::putenv(const_cast<char*>(env[static_cast<size_t>(r)].c_str()));
      if (setup) setup(r);
      int code = 1;
      try {
        gloo::rendezvous::FileStore store(dir.string());
        std::string why;
        auto group = ShmGroup::create(store, r, world, 10s, &why);
        if (!group) {
          std::fprintf(stderr, "rank %d: no group%s%s\n", r, why.empty() ? "" : ": ", why.c_str());
          code = why.empty() ? 77 : 78;  // no group, by choice / for a reason: the test decides
        } else {
          code = body(*group, r);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: unexpected exception: %s\n", r, e.what());
      }
      std::fflush(stderr);
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes;
  const auto until = Clock::now() + 60s;
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (Clock::now() > until) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        status = -1;
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    codes.push_back(status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  std::filesystem::remove_all(dir);
  return codes;
}

const loom::gloo_plugin::ReduceFn& float_sum() {
  static const auto fn = loom::gloo_plugin::reduce_function(LOOM_DTYPE_FLOAT32, LOOM_COMM_SUM);
  return fn;
}

// Runs an all_reduce of n floats (rank r contributes r + 1 everywhere);
// returns the error message, or "" on success (then checks the sum).
std::string all_reduce(ShmGroup& g, int rank, int world, size_t n, uint64_t seq, Clock::duration limit,
                       bool* right = nullptr) {
  std::vector<float> v(n, static_cast<float>(rank + 1));
  try {
    g.all_reduce(reinterpret_cast<char*>(v.data()), n, sizeof(float), float_sum(), seq, 42, Clock::now() + limit);
  } catch (const loom::plugin::Failure& e) {
    return e.what();
  }
  const float want = static_cast<float>(world * (world + 1) / 2);
  if (right) {
    *right = true;
    for (float x : v) *right = *right && x == want;
  }
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("shared-memory all_reduce of several chunks across 3 processes", "[gloo][shm]") {
  const auto codes = run_ranks(3, [](ShmGroup& g, int rank) {
    const size_t n = g.slot_bytes() / sizeof(float) * 2 + 5;  // two full chunks and an uneven third
    bool right = false;
    const std::string err = all_reduce(g, rank, 3, n, 1, 10s, &right);
    return expect(err.empty() && right, rank, "a correct sum, got '" + err + "'");
  });
  CHECK(codes == std::vector<int>{0, 0, 0});
}

TEST_CASE("after a rank's collective fails, every rank's next one fails instead of pairing with the wrong one",
          "[gloo][shm][faults]") {
  // Rank 0 times out waiting for rank 1, then (as a DDP bucket queued behind
  // it would) starts its next collective — with the same sequence and
  // signature, the worst case: nothing but the group's failure state can
  // tell the late rank 1 that rank 0 has moved on.
  const auto codes = run_ranks(2, [](ShmGroup& g, int rank) {
    if (rank == 0) {
      const std::string first = all_reduce(g, 0, 2, 1000, 1, 200ms);
      int bad = expect(has(first, "timed out waiting for rank 1"), 0, "a timeout, got '" + first + "'");
      const auto t0 = Clock::now();
      const std::string next = all_reduce(g, 0, 2, 1000, 1, 5s);
      bad |= expect(has(next, "out of step") && Clock::now() - t0 < 1s, 0, "an at-once refusal, got '" + next + "'");
      std::this_thread::sleep_for(1500ms);  // alive while rank 1 arrives late
      return bad;
    }
    std::this_thread::sleep_for(600ms);
    const std::string late = all_reduce(g, 1, 2, 1000, 1, 5s);
    return expect(has(late, "failed on rank 0"), 1, "a failure naming rank 0, got '" + late + "'");
  });
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("a peer that exits is named at once, not at the deadline", "[gloo][shm][faults]") {
  const auto codes = run_ranks(2, [](ShmGroup& g, int rank) {
    if (rank == 1) ::_exit(0);
    const auto t0 = Clock::now();
    const std::string err = all_reduce(g, 0, 2, 1000, 1, 30s);
    return expect(has(err, "rank 1 (pid") && has(err, "exited") && Clock::now() - t0 < 5s, 0,
                  "rank 1 named as exited within 5 s, got '" + err + "'");
  });
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("abort() ends a wait in progress", "[gloo][shm][faults]") {
  const auto codes = run_ranks(2, [](ShmGroup& g, int rank) {
    if (rank == 1) {
      std::this_thread::sleep_for(3s);
      return 0;
    }
    std::thread aborter([&g] {
      std::this_thread::sleep_for(100ms);
      g.abort();
    });
    const auto t0 = Clock::now();
    const std::string err = all_reduce(g, 0, 2, 1000, 1, 30s);
    aborter.join();
    return expect(has(err, "aborted") && Clock::now() - t0 < 2s, 0, "an abort within 2 s, got '" + err + "'");
  });
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("LOOM_GLOO_SHM=0 on one rank leaves every rank without a group", "[gloo][shm]") {
  const auto codes = run_ranks(2, [](ShmGroup&, int) { return 0; }, {"", "LOOM_GLOO_SHM=0"});
  CHECK(codes == std::vector<int>{77, 77});
}

TEST_CASE("a segment name left by a killed rank 0 is removed by the next rendezvous", "[gloo][shm][faults]") {
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const std::string stale = "/loom-gloo-" + std::to_string(gone) + "-0-test";
  const int fd = ::shm_open(stale.c_str(), O_CREAT | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  ::close(fd);
  const auto codes = run_ranks(2, [](ShmGroup&, int) { return 0; });
  CHECK(codes == std::vector<int>{0, 0});
  const bool still_there = std::filesystem::exists("/dev/shm" + stale);
  if (still_there) ::shm_unlink(stale.c_str());
  CHECK_FALSE(still_there);
}

TEST_CASE("a rank that cannot map the segment leaves every rank without a group, saying why", "[gloo][shm][faults]") {
  // Rank 1 runs as another user: the segment (mode 0600, rank 0's) refuses
  // it. The plugin then uses TCP on every rank and prints the reason.
  auto can_switch_user = [] {
    if (::geteuid() != 0) return false;
    const pid_t probe = ::fork();
    if (probe == 0) ::_exit(::setuid(65534) == 0 ? 0 : 1);
    int status = 0;
    ::waitpid(probe, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  };
  if (!can_switch_user()) {
    WARN("skipped: running a rank as another user needs root (and CAP_SETUID)");
    return;
  }
  const auto codes = run_ranks(2, [](ShmGroup&, int) { return 0; }, {}, [](int rank) {
    if (rank == 1 && ::setuid(65534) != 0) ::_exit(2);
  });
  CHECK(codes == std::vector<int>{78, 78});
}
