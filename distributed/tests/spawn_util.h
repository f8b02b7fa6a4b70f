// spawn_util.h — child processes for the multi-process tests (collectives,
// DDP, the ABI and two-node tests) and a free port: commands started together
// with posix_spawnp (never fork: the test process may hold threads), their
// stdout and stderr in one log each, waited for with a deadline. Whatever
// still runs at the deadline gets SIGTERM (loom-run then stops its ranks),
// SIGKILL a moment later, and is reaped: no child outlives its test.
#pragma once

#include "free_port.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace loom_dist_test {

// A port free on 127.0.0.1 a moment ago (bound to 0, read, closed).
inline int free_port() {
  const int port = free_loopback_port();
  REQUIRE(port > 0);
  return port;
}

struct Command {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH
  std::vector<std::string> env;   // "NAME=value", replacing the parent's NAME
};

struct Outcome {
  std::string command;  // for messages
  pid_t pid = 0;
  int status = -1;       // the raw wait status, once exited
  bool exited = false;   // false: still running at the deadline (a hang), or never started
  bool timed_out = false;
  int spawn_error = 0;   // posix_spawnp's error (ENOENT: no such program)
  std::string log;       // stdout and stderr
};

inline bool succeeded(const Outcome& o) { return o.exited && WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0; }

// "exited with status 3", "was killed by signal 9", "did not start: ...".
inline std::string describe(const Outcome& o) {
  if (o.spawn_error) return "did not start: " + std::string(std::strerror(o.spawn_error));
  if (o.timed_out) return "was still running at the deadline (stopped)";
  if (WIFSIGNALED(o.status)) return "was killed by signal " + std::to_string(WTERMSIG(o.status));
  return "exited with status " + std::to_string(WEXITSTATUS(o.status));
}

// `env` over this process's environment: entries of the same name replaced.
inline std::vector<std::string> merged_environment(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const std::string& mine : env) {
      const size_t eq = mine.find('=');
      replaced = replaced || (eq != std::string::npos && entry.compare(0, eq + 1, mine, 0, eq + 1) == 0);
    }
    if (!replaced) out.push_back(entry);
  }
  out.insert(out.end(), env.begin(), env.end());
  return out;
}

// Starts every command at once and waits for all of them, at most `limit`.
// `log_stem` names the logs (<stem>_<pid>_<i>.log), which are read into the
// outcomes and removed.
inline std::vector<Outcome> run_together(const std::vector<Command>& commands, std::chrono::milliseconds limit,
                                         const std::string& log_stem) {
  std::vector<Outcome> out(commands.size());
  std::vector<std::string> logs(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    Outcome& o = out[i];
    for (const std::string& a : commands[i].argv) o.command += (o.command.empty() ? "" : " ") + a;
    logs[i] = log_stem + "_" + std::to_string(::getpid()) + "_" + std::to_string(i) + ".log";
    std::vector<std::string> args = commands[i].argv, env = merged_environment(commands[i].env);
    std::vector<char*> argv, envp;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, logs[i].c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    o.spawn_error = posix_spawnp(&o.pid, argv[0], &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (o.spawn_error) o.pid = 0;
  }
  auto reap = [&](bool block) {
    size_t left = 0;
    for (Outcome& o : out) {
      if (!o.pid || o.exited) continue;
      if (::waitpid(o.pid, &o.status, block ? 0 : WNOHANG) == o.pid)
        o.exited = true;
      else
        ++left;
    }
    return left;
  };
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (reap(false) > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (reap(false) > 0) {  // a hang: stop it (the test fails on timed_out)
    for (Outcome& o : out)
      if (o.pid && !o.exited) {
        o.timed_out = true;
        ::kill(o.pid, SIGTERM);
      }
    const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (reap(false) > 0 && std::chrono::steady_clock::now() < grace)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (Outcome& o : out)
      if (o.pid && !o.exited) ::kill(o.pid, SIGKILL);
    reap(true);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    std::ifstream f(logs[i]);
    std::stringstream s;
    s << f.rdbuf();
    out[i].log = s.str();
    ::unlink(logs[i].c_str());
  }
  return out;
}

// One command, waited for at most `limit`.
inline Outcome run_one(const Command& command, std::chrono::milliseconds limit, const std::string& log_stem) {
  return run_together({command}, limit, log_stem).front();
}

}  // namespace loom_dist_test
