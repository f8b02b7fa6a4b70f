// Multi-process tests of the gloo backend: collectives_worker processes on
// 127.0.0.1, started here (spawn_util.h), each checked for its exit status and its
// output.
#include "spawn_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace {

using namespace loom_dist_test;

// Starts `ranks` (rank numbers) of a world of `world` running `scenario`,
// waits for all, at most `limit`; stops what is left after it.
std::vector<Outcome> run_world(const std::string& scenario, const std::vector<int>& ranks, int world,
                               const std::string& init, int timeout_ms, std::chrono::seconds limit) {
  std::vector<Command> commands;
  for (int r : ranks)
    commands.push_back({{LOOM_DIST_WORKER, scenario, std::to_string(r), std::to_string(world), init,
                         std::to_string(timeout_ms)}});
  return run_together(commands, limit, std::string(LOOM_DIST_TEST_DIR) + "/" + scenario);
}

}  // namespace

TEST_CASE("every collective and dtype over gloo matches the local reference, world sizes 1 to 4",
          "[distributed][collectives]") {
  for (int world : {1, 2, 3, 4}) {
    const std::string init = "tcp://127.0.0.1:" + std::to_string(free_port());
    std::vector<int> ranks;
    for (int r = 0; r < world; ++r) ranks.push_back(r);
    const auto result = run_world("collectives", ranks, world, init, 30000, std::chrono::seconds(120));
    for (size_t r = 0; r < result.size(); ++r) {
      INFO("world " << world << ", rank " << r << ":\n" << result[r].log);
      CHECK(succeeded(result[r]));
    }
  }
}

// Runs the transport scenario on ranks 0 .. world-1 with `env` added.
std::vector<Outcome> run_transport(int world, const std::vector<std::string>& env) {
  const std::string init = "tcp://127.0.0.1:" + std::to_string(free_port());
  std::vector<Command> commands;
  for (int r = 0; r < world; ++r)
    commands.push_back(
        {{LOOM_DIST_WORKER, "transport", std::to_string(r), std::to_string(world), init, "30000"}, env});
  return run_together(commands, std::chrono::seconds(120), std::string(LOOM_DIST_TEST_DIR) + "/transport");
}

bool says(const Outcome& o, const std::string& line) { return o.log.find(line + "\n") != std::string::npos; }

TEST_CASE("gloo's TCP loop thread runs under SCHED_BATCH unless LOOM_GLOO_LOOP_SCHED=other",
          "[distributed][collectives]") {
  // Without it a rank whose loop thread shares a core with the collective's
  // thread stalls ~4 ms a call (plugins/gloo/loop_thread.hpp): the timing
  // is bench/dist_allreduce.py's; this checks the policy is in place.
  for (const std::string policy : {"", "other"}) {
    for (const Outcome& r : run_transport(2, {"LOOM_GLOO_LOOP_SCHED=" + policy})) {
      INFO("LOOM_GLOO_LOOP_SCHED='" << policy << "':\n" << r.log);
      CHECK(succeeded(r));
      // One gloo device, one loop thread; nothing else of the process is moved.
      CHECK(says(r, policy.empty() ? "threads under SCHED_BATCH: 1" : "threads under SCHED_BATCH: 0"));
    }
  }
}

TEST_CASE("ranks on one host share memory unless LOOM_GLOO_SHM=0; both ways give the same results",
          "[distributed][collectives]") {
  // Tensors of several shared-memory slots, world 2 and 3 (uneven shares).
  for (int world : {2, 3}) {
    for (const std::string shm : {"", "0"}) {
      for (const Outcome& r : run_transport(world, {"LOOM_GLOO_SHM=" + shm})) {
        INFO("world " << world << ", LOOM_GLOO_SHM='" << shm << "':\n" << r.log);
        CHECK(succeeded(r));
        CHECK(says(r, shm.empty() ? "shared-memory segments: 1" : "shared-memory segments: 0"));
      }
    }
  }
  // One rank switched off is every rank on TCP (they must agree).
  const std::string init = "tcp://127.0.0.1:" + std::to_string(free_port());
  std::vector<Command> commands;
  for (int r = 0; r < 2; ++r)
    commands.push_back({{LOOM_DIST_WORKER, "transport", std::to_string(r), "2", init, "30000"},
                        {r == 1 ? "LOOM_GLOO_SHM=0" : "LOOM_GLOO_SHM="}});
  for (const Outcome& r : run_together(commands, std::chrono::seconds(120),
                                       std::string(LOOM_DIST_TEST_DIR) + "/transport_mixed")) {
    INFO(r.log);
    CHECK(succeeded(r));
    CHECK(says(r, "shared-memory segments: 0"));
  }
}

TEST_CASE("every collective and dtype over gloo's TCP path (LOOM_GLOO_SHM=0) matches the local reference",
          "[distributed][collectives]") {
  // The path of ranks on several hosts, here on loopback.
  for (int world : {2, 3}) {
    const std::string init = "tcp://127.0.0.1:" + std::to_string(free_port());
    std::vector<Command> commands;
    for (int r = 0; r < world; ++r)
      commands.push_back({{LOOM_DIST_WORKER, "collectives", std::to_string(r), std::to_string(world), init, "30000"},
                          {"LOOM_GLOO_SHM=0"}});
    const auto result = run_together(commands, std::chrono::seconds(120),
                                     std::string(LOOM_DIST_TEST_DIR) + "/collectives_tcp");
    for (size_t r = 0; r < result.size(); ++r) {
      INFO("world " << world << ", rank " << r << ":\n" << result[r].log);
      CHECK(succeeded(result[r]));
    }
  }
}

TEST_CASE("a rank that does not join a collective makes the others fail after the timeout, naming it",
          "[distributed][faults]") {
  for (const std::string shm : {"", "0"}) {
    const std::string init = "tcp://127.0.0.1:" + std::to_string(free_port());
    std::vector<Command> commands;
    for (int r = 0; r < 2; ++r)
      commands.push_back({{LOOM_DIST_WORKER, "stall", std::to_string(r), "2", init, "1500"}, {"LOOM_GLOO_SHM=" + shm}});
    const auto t0 = std::chrono::steady_clock::now();
    const auto result = run_together(commands, std::chrono::seconds(60), std::string(LOOM_DIST_TEST_DIR) + "/stall");
    INFO("LOOM_GLOO_SHM='" << shm << "', rank 0:\n" << result[0].log);
    CHECK(result[0].exited);
    CHECK(WIFEXITED(result[0].status));
    CHECK(WEXITSTATUS(result[0].status) == 1);  // an error, not "completed" (3), not a hang
    CHECK(result[0].log.find("rank 1 has no record for it") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
  }
}

TEST_CASE("file:// rendezvous works as tcp:// does", "[distributed][collectives]") {
  const std::string path = std::string(LOOM_DIST_TEST_DIR) + "/file_init_" + std::to_string(::getpid());
  ::unlink(path.c_str());
  const auto result = run_world("collectives", {0, 1}, 2, "file://" + path, 30000, std::chrono::seconds(120));
  for (const Outcome& r : result) {
    INFO(r.log);
    CHECK(succeeded(r));
  }
  ::unlink(path.c_str());
}

TEST_CASE("a rank that never arrives fails init_process_group after the timeout, naming the address",
          "[distributed][faults]") {
  const int port = free_port();
  const auto t0 = std::chrono::steady_clock::now();
  const auto result = run_world("init_only", {0}, 2, "tcp://127.0.0.1:" + std::to_string(port), 1500,
                                std::chrono::seconds(60));
  INFO(result[0].log);
  CHECK(result[0].exited);
  CHECK_FALSE(succeeded(result[0]));
  CHECK(result[0].log.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
}

TEST_CASE("a port already in use is reported", "[distributed][faults]") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  const auto result = run_world("init_only", {0}, 1, "tcp://127.0.0.1:" + std::to_string(port), 2000,
                                std::chrono::seconds(30));
  ::close(fd);
  INFO(result[0].log);
  CHECK_FALSE(succeeded(result[0]));
  CHECK(result[0].log.find("in use") != std::string::npos);
  CHECK(result[0].log.find(std::to_string(port)) != std::string::npos);
}

TEST_CASE("a rank killed during an all_reduce makes the others fail, not hang", "[distributed][faults]") {
  const std::string init = "tcp://127.0.0.1:" + std::to_string(free_port());
  const auto t0 = std::chrono::steady_clock::now();
  const auto result = run_world("die_in_all_reduce", {0, 1, 2}, 3, init, 5000, std::chrono::seconds(60));
  for (const Outcome& r : result) {
    INFO(r.log);
    CHECK(r.exited);  // nobody hung until the test's limit
    CHECK_FALSE(succeeded(r));
  }
  CHECK((WIFSIGNALED(result[1].status) && WTERMSIG(result[1].status) == SIGKILL));
  for (size_t r : {size_t{0}, size_t{2}}) {
    INFO(result[r].log);
    CHECK(WIFEXITED(result[r].status));
    CHECK(WEXITSTATUS(result[r].status) == 1);
    CHECK(result[r].log.find("all_reduce") != std::string::npos);
    // The lost peer is named: the flight recorder has nothing from it.
    CHECK(result[r].log.find("rank 1 has no record for it") != std::string::npos);
    // And the group is aborted: the next collective failed at once (status 1, not 4).
    CHECK(result[r].log.find("was aborted") != std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
}

namespace {

// Runs loom-run with `args`; its exit status (-1: killed) and output.
std::pair<int, std::string> launch(const std::vector<std::string>& args, std::chrono::seconds limit) {
  std::vector<std::string> argv = {LOOM_RUN};
  argv.insert(argv.end(), args.begin(), args.end());
  const Outcome o = run_one({argv}, limit, std::string(LOOM_DIST_TEST_DIR) + "/loom_run");
  return {o.exited && WIFEXITED(o.status) ? WEXITSTATUS(o.status) : -1, o.log};
}

}  // namespace

TEST_CASE("loom-run starts a world whose ranks meet through env://", "[distributed][launcher]") {
  const auto [code, log] = launch({"--nproc-per-node", "3", "--master-port", std::to_string(free_port()),
                                   LOOM_DIST_WORKER, "collectives", "-", "-", "env://", "30000"},
                                  std::chrono::seconds(120));
  INFO(log);
  CHECK(code == 0);
}

TEST_CASE("loom-run stops every rank when one fails and names it", "[distributed][launcher][faults]") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto [code, log] = launch({"--nproc-per-node", "3", "--grace", "2", "--master-port",
                                   std::to_string(free_port()), LOOM_DIST_WORKER, "fail_rank1", "-", "-", "env://"},
                                  std::chrono::seconds(60));
  INFO(log);
  CHECK(code == 3);
  CHECK(log.find("rank 1 (local rank 1") != std::string::npos);
  CHECK(log.find("exited with status 3") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));  // the sleeping ranks were stopped
}

TEST_CASE("ranks that issue different collectives fail naming the ranks, their ops and the sequence",
          "[distributed][faults]") {
  const std::string init = "tcp://127.0.0.1:" + std::to_string(free_port());
  const auto result = run_world("desync", {0, 1, 2}, 3, init, 2000, std::chrono::seconds(60));
  for (size_t r = 0; r < result.size(); ++r) {
    INFO("rank " << r << ": " << result[r].log);
    CHECK(result[r].exited);
    CHECK(WIFEXITED(result[r].status));
    CHECK(WEXITSTATUS(result[r].status) == 1);  // an error, not "completed" (3), not a hang
    CHECK(result[r].log.find("flight recorder, sequence 1") != std::string::npos);
    CHECK(result[r].log.find("float32[10]") != std::string::npos);
    CHECK(result[r].log.find("float32[11]") != std::string::npos);
    CHECK(result[r].log.find("desynchronised") != std::string::npos);
  }
}
