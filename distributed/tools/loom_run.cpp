// loom-run: starts the processes of a distributed job on this node, as
// torchrun and `python3 -m loom.distributed.run` do, for C++ programs:
//
//   loom-run --nproc-per-node 2 ./train_mlp --distributed
//   loom-run --nnodes 2 --node-rank 1 --nproc-per-node 4 --master-addr 10.0.0.1 --master-port 29500 ./train
//
// Each process gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
// GROUP_RANK, MASTER_ADDR and MASTER_PORT (init_process_group's env://).
// When one exits non-zero or by a signal, the others are stopped (SIGTERM to
// each rank's process group, SIGKILL after --grace seconds) and loom-run
// exits non-zero naming the rank and its status. SIGINT / SIGTERM to loom-run
// stop every rank the same way.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

volatile std::sig_atomic_t g_signal = 0;
void on_signal(int s) { g_signal = s; }

struct Options {
  int nproc = 1, nnodes = 1, node_rank = 0, master_port = 29500;
  double grace = 5.0;
  std::string master_addr = "127.0.0.1";
  std::vector<std::string> command;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "loom-run: %s\nusage: loom-run [--nproc-per-node N] [--nnodes M] [--node-rank R] "
               "[--master-addr A] [--master-port P] [--grace S] program [args...]\n",
               why);
  std::exit(2);
}

int to_int(const char* flag, const char* v) {
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (!*v || *end || x < 0 || x > 1 << 20) usage((std::string(flag) + " needs a non-negative integer").c_str());
  return static_cast<int>(x);
}

Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    std::string flag = argv[i];
    for (char& c : flag)
      if (c == '_') c = '-';
    if (flag == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) usage(("missing value for " + flag).c_str());
    const char* v = argv[++i];
    if (flag == "--nproc-per-node") o.nproc = to_int(argv[i - 1], v);
    else if (flag == "--nnodes") o.nnodes = to_int(argv[i - 1], v);
    else if (flag == "--node-rank") o.node_rank = to_int(argv[i - 1], v);
    else if (flag == "--master-port") o.master_port = to_int(argv[i - 1], v);
    else if (flag == "--master-addr") o.master_addr = v;
    else if (flag == "--grace") o.grace = std::atof(v);
    else usage(("unknown option " + flag).c_str());
  }
  for (; i < argc; ++i) o.command.push_back(argv[i]);
  if (o.command.empty()) usage("no program to run");
  if (o.nproc < 1 || o.nnodes < 1) usage("--nproc-per-node and --nnodes must be at least 1");
  if (o.node_rank >= o.nnodes) usage("--node-rank must be below --nnodes");
  if (o.master_port < 1 || o.master_port > 65535) usage("--master-port must be a port number");
  return o;
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    const char* name = strsignal(WTERMSIG(status));
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + (name ? name : "?") + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

struct Rank {
  int rank = 0;
  pid_t pid = 0;
  bool done = false;
  int status = 0;
};

// SIGTERM to every live rank's process group, SIGKILL after `grace`.
void stop(std::vector<Rank>& ranks, double grace) {
  for (Rank& r : ranks)
    if (!r.done) ::kill(-r.pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace);
  for (;;) {
    bool live = false;
    for (Rank& r : ranks)
      if (!r.done && ::waitpid(r.pid, &r.status, WNOHANG) == r.pid) r.done = true;
    for (Rank& r : ranks) live = live || !r.done;
    if (!live || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (Rank& r : ranks)
    if (!r.done) {
      ::kill(-r.pid, SIGKILL);
      ::waitpid(r.pid, &r.status, 0);
      r.done = true;
    }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const int world = o.nnodes * o.nproc;
  std::vector<Rank> ranks;
  for (int local = 0; local < o.nproc; ++local) {
    Rank r;
    r.rank = o.node_rank * o.nproc + local;
    // The parent's environment without the variables set here (getenv
    // finds the first of duplicates).
    static const char* const kOwn[] = {"RANK=", "LOCAL_RANK=", "WORLD_SIZE=", "LOCAL_WORLD_SIZE=",
                                       "GROUP_RANK=", "MASTER_ADDR=", "MASTER_PORT="};
    std::vector<std::string> env_store;
    for (char** e = environ; *e; ++e) {
      bool own = false;
      for (const char* k : kOwn) own = own || std::strncmp(*e, k, std::strlen(k)) == 0;
      if (!own) env_store.emplace_back(*e);
    }
    auto set = [&](const char* k, const std::string& v) { env_store.push_back(std::string(k) + "=" + v); };
    set("RANK", std::to_string(r.rank));
    set("LOCAL_RANK", std::to_string(local));
    set("WORLD_SIZE", std::to_string(world));
    set("LOCAL_WORLD_SIZE", std::to_string(o.nproc));
    set("GROUP_RANK", std::to_string(o.node_rank));
    set("MASTER_ADDR", o.master_addr);
    set("MASTER_PORT", std::to_string(o.master_port));
    std::vector<char*> envp, args;
    for (std::string& s : env_store) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> cmd = o.command;
    for (std::string& s : cmd) args.push_back(s.data());
    args.push_back(nullptr);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: stopping it stops its children
    posix_spawnattr_setpgroup(&attr, 0);
    const int rc = posix_spawnp(&r.pid, cmd[0].c_str(), nullptr, &attr, args.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
      std::fprintf(stderr, "loom-run: cannot start rank %d (%s): %s\n", r.rank, cmd[0].c_str(), std::strerror(rc));
      stop(ranks, o.grace);
      return 1;
    }
    ranks.push_back(r);
  }
  for (;;) {
    if (g_signal) {
      stop(ranks, o.grace);
      std::fprintf(stderr, "loom-run: stopped every rank on signal %d\n", static_cast<int>(g_signal));
      return 128 + g_signal;
    }
    bool live = false;
    for (Rank& r : ranks) {
      if (!r.done && ::waitpid(r.pid, &r.status, WNOHANG) == r.pid) r.done = true;
      if (r.done && !(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)) {
        std::fprintf(stderr, "loom-run: rank %d (local rank %d, pid %d) %s; stopping the other ranks\n", r.rank,
                     r.rank - o.node_rank * o.nproc, static_cast<int>(r.pid), describe(r.status).c_str());
        const int status = r.status;
        stop(ranks, o.grace);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      live = live || !r.done;
    }
    if (!live) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}
