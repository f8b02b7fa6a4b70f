// test_util.h — helpers of the store tests: bytes <-> text, a free port,
// and fork()ed children that always end in _exit.
#pragma once

#include "spawn_util.h"

#include <loom/distributed/store.h>
#include <loom/error.h>

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace loom_store_test {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

inline std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
inline std::string text(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

inline long long ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

// A port free on 127.0.0.1 a moment ago, for tests whose client must know
// the port before the server exists.
inline uint16_t free_port() { return static_cast<uint16_t>(loom_dist_test::free_port()); }

// A unique path in the temporary directory, removed with the object.
struct TempPath {
  std::string path;
  TempPath() {
    static int n = 0;
    path = (std::filesystem::temp_directory_path() /
            ("loom_filestore_" + std::to_string(::getpid()) + "_" + std::to_string(n++)))
               .string();
    std::filesystem::remove(path);
  }
  ~TempPath() { std::filesystem::remove(path); }
};

// In a child: a failed check prints where and ends the child with status 1.
#define CHILD_CHECK(cond)                                                          \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::fprintf(stderr, "child %d: %s:%d: CHILD_CHECK(%s) failed\n", ::getpid(), \
                   __FILE__, __LINE__, #cond);                                     \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

// The children of one test: fork()ed bodies that return an exit status and
// never return into Catch; any child still alive at the end is killed.
class Children {
 public:
  template <class Body>
  pid_t spawn(Body body) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int status = 2;
      try {
        status = body();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: exception: %s\n", ::getpid(), e.what());
        status = 3;
      } catch (...) {
        status = 4;
      }
      ::_exit(status);
    }
    pids_.push_back(pid);
    return pid;
  }

  // The child's raw wait status; kills it and fails the test when it runs
  // past `limit`.
  int wait(pid_t pid, std::chrono::milliseconds limit = 8000ms) {
    const auto deadline = Clock::now() + limit;
    int status = 0;
    for (;;) {
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      REQUIRE(r == 0);
      if (Clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        forget(pid);
        FAIL("child " << pid << " still running after " << limit.count() << " ms");
      }
      std::this_thread::sleep_for(5ms);
    }
    forget(pid);
    return status;
  }

  // True when the child exited with status 0.
  bool succeeded(pid_t pid) {
    const int status = wait(pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  ~Children() {
    for (pid_t pid : pids_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }

 private:
  void forget(pid_t pid) { std::erase(pids_, pid); }
  std::vector<pid_t> pids_;
};

}  // namespace loom_store_test

namespace loom_store_test {

// The loom::Error that f throws; fails the test when it throws none.
template <class F>
loom::Error error_of(F f) {
  try {
    f();
  } catch (const loom::Error& e) {
    return e;
  }
  FAIL("expected a loom::Error");
  return loom::Error("unreachable");
}

}  // namespace loom_store_test
