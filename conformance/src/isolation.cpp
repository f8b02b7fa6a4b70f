// isolation.cpp — the worker pool: spawn, feed, watch, replace.
#include "isolation.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <poll.h>
#include <sstream>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace loom::conformance {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRequestFd = 3, kResultFd = 4;
constexpr double kStartupSeconds = 120;  // loading plugins and planning, not a case

struct Worker {
  pid_t pid = -1;
  int to_worker = -1, from_worker = -1;
  std::string buffer;
  bool ready = false;
  long current = -1;  // case index being run, -1 when idle
  Clock::time_point since;
};

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

Worker spawn_worker(const PoolConfig& config) {
  int req[2], res[2];
  if (pipe2(req, O_CLOEXEC) != 0 || pipe2(res, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, req[0], kRequestFd);
  posix_spawn_file_actions_adddup2(&fa, res[1], kResultFd);
  if (config.quiet_workers) {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  std::vector<std::string> args{config.self_exe, "--worker"};
  args.insert(args.end(), config.worker_args.begin(), config.worker_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Worker w;
  const int rc = posix_spawn(&w.pid, config.self_exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(req[0]);
  ::close(res[1]);
  if (rc != 0) {
    ::close(req[1]);
    ::close(res[0]);
    throw std::runtime_error("cannot start a worker (" + config.self_exe + "): " + std::strerror(rc));
  }
  w.to_worker = req[1];
  w.from_worker = res[0];
  w.since = Clock::now();
  return w;
}

std::string seconds_text(double s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

// Reaps `w` (killing it first when asked) and describes how it ended.
std::string reap(Worker& w, bool kill_first) {
  if (w.to_worker >= 0) ::close(w.to_worker);
  if (w.from_worker >= 0) ::close(w.from_worker);
  w.to_worker = w.from_worker = -1;
  if (kill_first) ::kill(w.pid, SIGKILL);
  int status = 0;
  while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
  }
  w.pid = -1;
  if (WIFSIGNALED(status))
    return std::string("the worker died of signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "the worker exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

CaseResult result_without_report(const CaseSpec& spec, Status status, const std::string& message) {
  CaseResult r;
  r.id = spec.id, r.op = spec.op, r.dtype = std::string(name(spec.dtype)), r.variant = to_string(spec.variant);
  r.seed = spec.seed, r.status = status, r.message = message;
  return r;
}

std::vector<CaseResult> run_in_workers(const std::vector<CaseSpec>& plan, const PoolConfig& config,
                                       const std::function<void(size_t, size_t, const CaseResult&)>& progress) {
  std::signal(SIGPIPE, SIG_IGN);  // a dead worker must not kill the runner
  std::vector<CaseResult> results(plan.size());
  std::vector<bool> have(plan.size(), false);
  size_t next = 0, done = 0;
  std::vector<Worker> workers;
  const size_t jobs = static_cast<size_t>(std::max(1, config.jobs));

  auto finish = [&](size_t index, CaseResult r) {
    if (have[index]) return;
    have[index] = true;
    results[index] = std::move(r);
    ++done;
    if (progress) progress(done, plan.size(), results[index]);
  };
  auto assign = [&](Worker& w) {
    if (next >= plan.size()) {
      ::close(w.to_worker);  // EOF: the worker exits
      w.to_worker = -1;
      return;
    }
    w.current = static_cast<long>(next++);
    w.since = Clock::now();
    if (!write_all(w.to_worker, std::to_string(w.current) + "\n")) {
      // Reported when its pipe closes.
    }
  };

  while (done < plan.size()) {
    // Keep up to `jobs` workers while cases remain unassigned.
    size_t alive = 0;
    for (auto& w : workers) alive += w.pid > 0;
    while (alive < jobs && next < plan.size()) {
      workers.push_back(spawn_worker(config));
      ++alive;
    }
    std::vector<pollfd> fds;
    std::vector<Worker*> polled;
    int wait_ms = 1000;
    const auto now = Clock::now();
    for (auto& w : workers) {
      if (w.pid <= 0) continue;
      fds.push_back({w.from_worker, POLLIN, 0});
      polled.push_back(&w);
      const double limit = w.ready ? config.timeout_seconds : kStartupSeconds;
      if (w.current >= 0 || !w.ready) {
        const double left = limit - std::chrono::duration<double>(now - w.since).count();
        wait_ms = std::min(wait_ms, std::max(0, static_cast<int>(left * 1000) + 1));
      }
    }
    if (fds.empty()) break;  // nothing left to wait for (should not happen)
    ::poll(fds.data(), fds.size(), wait_ms);

    for (size_t k = 0; k < fds.size(); ++k) {
      Worker& w = *polled[k];
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[65536];
        const ssize_t n = ::read(w.from_worker, buf, sizeof buf);
        if (n > 0) {
          w.buffer.append(buf, static_cast<size_t>(n));
          size_t nl;
          while ((nl = w.buffer.find('\n')) != std::string::npos) {
            const std::string line = w.buffer.substr(0, nl);
            w.buffer.erase(0, nl + 1);
            if (line == "ready") {
              w.ready = true;
              assign(w);
              continue;
            }
            const size_t tab = line.find('\t');
            const long index = tab == std::string::npos ? -1 : std::strtol(line.c_str(), nullptr, 10);
            auto r = index == w.current ? decode_result(line.substr(tab + 1)) : std::nullopt;
            if (!r) continue;  // not ours: ignore rather than trust it
            finish(static_cast<size_t>(index), std::move(*r));
            w.current = -1;
            assign(w);
          }
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        // EOF: the worker is gone.
        const long current = w.current;
        const bool was_ready = w.ready;
        const std::string how = reap(w, false);
        if (current >= 0) {
          finish(static_cast<size_t>(current),
                 result_without_report(plan[static_cast<size_t>(current)], Status::Crash, how + " during this case"));
        } else if (!was_ready) {
          // A worker that cannot even start would fail every case alike.
          throw std::runtime_error("a worker failed before running any case: " + how +
                                   " (run with --in-process to see why)");
        }
        continue;
      }
      const double limit = w.ready ? config.timeout_seconds : kStartupSeconds;
      if ((w.current >= 0 || !w.ready) &&
          std::chrono::duration<double>(Clock::now() - w.since).count() > limit) {
        const long current = w.current;
        reap(w, true);
        if (current < 0) throw std::runtime_error("a worker took too long to start");
        finish(static_cast<size_t>(current),
               result_without_report(plan[static_cast<size_t>(current)], Status::Timeout,
                                     "no result after " + seconds_text(config.timeout_seconds) + " s; the worker was killed"));
      }
    }
    std::erase_if(workers, [](const Worker& w) { return w.pid <= 0; });
  }
  for (auto& w : workers)
    if (w.pid > 0) reap(w, w.current >= 0);
  return results;
}

int serve_worker(size_t plan_size, const std::function<CaseResult(size_t)>& run) {
  std::signal(SIGPIPE, SIG_IGN);
  if (!write_all(kResultFd, "ready\n")) return 3;
  std::string pending;
  char buf[4096];
  for (;;) {
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      char* end = nullptr;
      const unsigned long index = std::strtoul(line.c_str(), &end, 10);
      if (end == line.c_str() || index >= plan_size) return 3;
      const CaseResult r = run(index);
      if (!write_all(kResultFd, std::to_string(index) + "\t" + encode_result(r) + "\n")) return 3;
    }
    const ssize_t n = ::read(kRequestFd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    pending.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace loom::conformance
