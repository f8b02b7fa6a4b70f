// Multi-process tests of the gloo backend: collectives_worker processes on
// 127.0.0.1, started here with posix_spawn (never fork: this process may
// hold threads), each checked for its exit status and its stderr.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

// A port free a moment ago (bound to 0, read, closed).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

struct Rank {
  pid_t pid = 0;
  std::string log;  // its stderr
  int status = -1;
  bool exited = false;
};

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Starts `ranks` (rank numbers) of a world of `world` running `scenario`,
// waits for all, at most `limit`; kills what is left after it.
std::vector<Rank> run_world(const std::string& scenario, const std::vector<int>& ranks, int world,
                            const std::string& init, int timeout_ms, std::chrono::seconds limit) {
  std::vector<Rank> out(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    // Per test process: ctest runs the cases in parallel.
    out[i].log = std::string(LOOM_DIST_TEST_DIR) + "/" + scenario + "_" + std::to_string(::getpid()) + "_rank" +
                 std::to_string(ranks[i]) + ".log";
    std::vector<std::string> args = {LOOM_DIST_WORKER, scenario, std::to_string(ranks[i]), std::to_string(world), init,
                                     std::to_string(timeout_ms)};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, out[i].log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(posix_spawn(&out[i].pid, LOOM_DIST_WORKER, &fa, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  size_t left = out.size();
  while (left > 0 && std::chrono::steady_clock::now() < deadline) {
    for (Rank& r : out) {
      if (r.exited) continue;
      if (::waitpid(r.pid, &r.status, WNOHANG) == r.pid) {
        r.exited = true;
        --left;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (Rank& r : out)
    if (!r.exited) {  // a hang: the test fails below, and leaves no orphan
      ::kill(r.pid, SIGKILL);
      ::waitpid(r.pid, &r.status, 0);
    }
  for (Rank& r : out) {
    const std::string path = r.log;
    r.log = read_file(path);
    ::unlink(path.c_str());
  }
  return out;
}

bool exited_zero(const Rank& r) { return r.exited && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

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
      CHECK(exited_zero(result[r]));
    }
  }
}

TEST_CASE("file:// rendezvous works as tcp:// does", "[distributed][collectives]") {
  const std::string path = std::string(LOOM_DIST_TEST_DIR) + "/file_init_" + std::to_string(::getpid());
  ::unlink(path.c_str());
  const auto result = run_world("collectives", {0, 1}, 2, "file://" + path, 30000, std::chrono::seconds(120));
  for (const Rank& r : result) {
    INFO(r.log);
    CHECK(exited_zero(r));
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
  CHECK_FALSE(exited_zero(result[0]));
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
  CHECK_FALSE(exited_zero(result[0]));
  CHECK(result[0].log.find("in use") != std::string::npos);
  CHECK(result[0].log.find(std::to_string(port)) != std::string::npos);
}

TEST_CASE("a rank killed during an all_reduce makes the others fail, not hang", "[distributed][faults]") {
  const std::string init = "tcp://127.0.0.1:" + std::to_string(free_port());
  const auto t0 = std::chrono::steady_clock::now();
  const auto result = run_world("die_in_all_reduce", {0, 1, 2}, 3, init, 5000, std::chrono::seconds(60));
  for (const Rank& r : result) {
    INFO(r.log);
    CHECK(r.exited);  // nobody hung until the test's limit
    CHECK_FALSE(exited_zero(r));
  }
  CHECK((WIFSIGNALED(result[1].status) && WTERMSIG(result[1].status) == SIGKILL));
  for (size_t r : {size_t{0}, size_t{2}}) {
    INFO(result[r].log);
    CHECK(WIFEXITED(result[r].status));
    CHECK(WEXITSTATUS(result[r].status) == 1);
    CHECK(result[r].log.find("all_reduce") != std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
}

namespace {

// Runs loom-run with `args`; its exit status and stderr.
std::pair<int, std::string> launch(const std::vector<std::string>& args, std::chrono::seconds limit) {
  const std::string log = std::string(LOOM_DIST_TEST_DIR) + "/loom_run_" + std::to_string(::getpid()) + ".log";
  std::vector<std::string> all = {LOOM_RUN};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, LOOM_RUN, &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  int status = -1;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string text = read_file(log);
  ::unlink(log.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
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
