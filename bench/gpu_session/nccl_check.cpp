// nccl_gpu_check: the nccl communication plugin on GPUs (run_checks.sh runs
// it; built as build/bin/nccl_gpu_check where the plugin is). Exits 0 when
// every check passed, else prints each failure and exits 1.
//
//   nccl_gpu_check                 a world of one process on cuda:0 (file://)
//   loom-run --nproc-per-node N build/bin/nccl_gpu_check
//                                  a world of N processes, rank r on cuda:r
//   nccl_gpu_check die [N] [ms]    N ranks (2; one GPU each) of which rank 1
//                                  is SIGKILLed before the second all_reduce:
//                                  the others must fail within the timeout
//                                  (ms, 10000) naming the all_reduce and
//                                  rank 1, never hang
//
// The collectives: every op x every dtype the plugin takes, against a
// reference computed on the CPU; int16 refused by name; a collective on a
// non-default stream; async works; a barrier; send/recv around a ring.
#include "free_port.h"    // distributed/tests
#include "rank_checks.h"  // distributed/tests: check, values, same

#include <loom/distributed/distributed.h>
#include <loom/error.h>
#include <loom/loom.h>
#include <loom/stream.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace dist = loom::distributed;
using loom::DType;
using loom::Tensor;

extern char** environ;

namespace {

using namespace loom_dist_test;

void collectives(loom::Device dev) {
  const int me = dist::get_rank(), world = dist::get_world_size();
  const int64_t n = 1000;
  auto on = [&](int r, DType dt) { return values(r, n, dt).to(dev); };
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64,
                   DType::Int8, DType::UInt8, DType::Bool}) {
    const bool is_bool = dt == DType::Bool;
    for (dist::ReduceOp op : {dist::ReduceOp::Sum, dist::ReduceOp::Product, dist::ReduceOp::Min, dist::ReduceOp::Max}) {
      Tensor expected = values(0, n, dt);
      for (int r = 1; r < world; ++r) {
        const Tensor x = values(r, n, dt);
        if (op == dist::ReduceOp::Sum) expected = is_bool ? loom::logical_or(expected, x) : expected + x;
        if (op == dist::ReduceOp::Product) expected = is_bool ? loom::logical_and(expected, x) : expected * x;
        if (op == dist::ReduceOp::Min) expected = loom::minimum(expected, x);
        if (op == dist::ReduceOp::Max) expected = loom::maximum(expected, x);
      }
      Tensor t = on(me, dt);
      dist::all_reduce(t, op);
      check(same(t, expected.to(dt)), label("all_reduce", dt) + " " + dist::to_string(op));
    }
    {
      Tensor t = on(me, dt);
      dist::broadcast(t, world - 1);
      check(same(t, values(world - 1, n, dt)), label("broadcast", dt));
    }
    {
      Tensor out = loom::zeros({world * n}, dt).to(dev);
      dist::all_gather_into_tensor(out, on(me, dt));
      for (int r = 0; r < world; ++r) check(same(out.narrow(0, r * n, n), values(r, n, dt)), label("all_gather", dt));
    }
    if (!is_bool) {
      Tensor sum = values(0, n, dt);
      for (int r = 1; r < world; ++r) sum = sum + values(r, n, dt);
      Tensor t = on(me, dt);
      dist::reduce(t, 0);
      check(same(t, me == 0 ? sum.to(dt) : values(me, n, dt)), label("reduce", dt));
      std::vector<Tensor> parts;
      for (int r = 0; r < world; ++r) parts.push_back(values(me + r, n, dt));
      Tensor expected = loom::zeros({n}, dt);
      for (int r = 0; r < world; ++r) expected = expected + values(r + me, n, dt);
      Tensor out = loom::zeros({n}, dt).to(dev);
      dist::reduce_scatter_tensor(out, loom::cat(parts, 0).to(dev));
      check(same(out, expected.to(dt)), label("reduce_scatter", dt));
    }
    {
      std::vector<Tensor> chunks;
      for (int j = 0; j < world; ++j) chunks.push_back(values(me * 10 + j, n, dt));
      Tensor out = loom::zeros({world * n}, dt).to(dev);
      dist::all_to_all_single(out, loom::cat(chunks, 0).to(dev));
      for (int j = 0; j < world; ++j)
        check(same(out.narrow(0, j * n, n), values(j * 10 + me, n, dt)), label("all_to_all", dt));
    }
    {
      std::vector<Tensor> list;
      for (int r = 0; r < world; ++r) list.push_back(loom::zeros({n}, dt).to(dev));
      dist::gather(on(me, dt), me == world - 1 ? &list : nullptr, world - 1);
      if (me == world - 1)
        for (int r = 0; r < world; ++r)
          check(same(list[static_cast<size_t>(r)], values(r, n, dt)), label("gather", dt));
      std::vector<Tensor> parts;
      for (int r = 0; r < world; ++r) parts.push_back(on(r + 20, dt));
      Tensor out = loom::zeros({n}, dt).to(dev);
      dist::scatter(out, me == 0 ? &parts : nullptr, 0);
      check(same(out, values(me + 20, n, dt)), label("scatter", dt));
    }
  }
  try {  // NCCL has no int16: the host refuses it by name
    Tensor t = loom::zeros({4}, DType::Int16).to(dev);
    dist::all_reduce(t);
    check(false, "an int16 all_reduce is refused");
  } catch (const loom::Error& e) {
    check(std::string(e.what()).find("int16") != std::string::npos, std::string("names int16: ") + e.what());
  }
  {  // On a stream of its own: the collective follows the kernels queued there.
    loom::Stream side(dev);
    Tensor t;
    {
      loom::StreamGuard guard(side);
      t = loom::full({1 << 22}, 1.0, DType::Float32, dev).mul(3.0);
      dist::all_reduce(t);
    }
    side.synchronize();
    check(same(t, loom::full({1 << 22}, 3.0 * world, DType::Float32)), "all_reduce on a side stream");
  }
  {  // async: started together, waited later
    std::vector<Tensor> ts;
    std::vector<std::shared_ptr<dist::Work>> works;
    for (int k = 0; k < 4; ++k) ts.push_back(loom::full({1000}, double(k + me), DType::Float32, dev));
    for (auto& t : ts) works.push_back(dist::all_reduce(t, dist::ReduceOp::Sum, nullptr, true));
    for (size_t k = 0; k < works.size(); ++k) {
      works[k]->wait();
      check(works[k]->is_completed(), "a waited work is completed");
      const double expected = world * double(k) + world * (world - 1) / 2.0;
      check(same(ts[k], loom::full({1000}, expected, DType::Float32)), "async all_reduce " + std::to_string(k));
    }
  }
  if (world > 1) {  // a ring, both started before any wait
    // NCCL runs a rank's sends and receives in order on its stream and a
    // send holds the stream until its peer receives: even ranks send
    // first, odd ranks receive first, or two sends could wait on each
    // other.
    const int next = (me + 1) % world, prev = (me + world - 1) % world;
    Tensor in = loom::zeros({n}).to(dev), out = on(me, DType::Float32);
    std::shared_ptr<dist::Work> s, r;
    if (me % 2 == 0) s = dist::isend(out, next, nullptr, 7);
    r = dist::irecv(in, prev, nullptr, 7);
    if (me % 2 == 1) s = dist::isend(out, next, nullptr, 7);
    r->wait();
    s->wait();
    check(same(in, values(prev, n, DType::Float32)), "send/recv ring");
  }
  dist::barrier();
  if (world > 1) {  // all_reduce bus bandwidth at 256 MiB, for the record
    Tensor t = loom::ones({64 << 20}, DType::Float32).to(dev);
    dist::all_reduce(t);
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < 10; ++k) dist::all_reduce(t);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 10;
    if (me == 0)
      std::printf("all_reduce 256 MiB float32 x %d ranks: %.2f ms, bus bandwidth %.1f GB/s\n", world, s * 1e3,
                  2.0 * (world - 1) / world * (256.0 * (1 << 20)) / s / 1e9);
  }
}

// One rank of `die`: rank 1 dies before the second all_reduce.
int die_rank(int rank, int world, const std::string& port, int timeout_ms) {
  dist::InitOptions o;
  o.init_method = "tcp://127.0.0.1:" + port;
  o.rank = rank;
  o.world_size = world;
  o.timeout = std::chrono::milliseconds(timeout_ms);
  dist::init_process_group("nccl", o);
  Tensor t = loom::ones({1 << 20}).to(loom::Device("cuda:" + std::to_string(rank)));
  dist::all_reduce(t);
  if (rank == 1) std::raise(SIGKILL);
  try {
    dist::all_reduce(t);
    std::fprintf(stderr, "rank %d: FAILED: the all_reduce without rank 1 completed\n", rank);
    return 1;
  } catch (const loom::Error& e) {
    const std::string m = e.what();
    std::printf("rank %d: all_reduce failed as it should: %s\n", rank, m.c_str());
    const bool named = m.find("all_reduce") != std::string::npos && m.find("rank 1") != std::string::npos;
    if (!named) std::fprintf(stderr, "rank %d: FAILED: the error does not name the all_reduce and rank 1\n", rank);
    return named ? 0 : 1;
  }
}

// `die`: starts the ranks as fresh processes (this one never touches CUDA,
// which does not survive a fork) and waits for them with a deadline.
int die(int world, int timeout_ms) {
  const std::string port = std::to_string(free_loopback_port()), self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    std::vector<std::string> args = {
        self, "die-rank", std::to_string(r), std::to_string(world), port, std::to_string(timeout_ms)};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return 1;
    pids.push_back(pid);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(3 * timeout_ms + 60000);
  int bad = 0;
  for (int r = 0; r < world; ++r) {
    int status = 0;
    while (waitpid(pids[static_cast<size_t>(r)], &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) {
        std::fprintf(stderr, "FAILED: rank %d hangs; killing it\n", r);
        ::kill(pids[static_cast<size_t>(r)], SIGKILL);
        waitpid(pids[static_cast<size_t>(r)], &status, 0);
        ++bad;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const bool expected = r == 1 ? WIFSIGNALED(status) : WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!expected) ++bad;
  }
  std::printf("die: %s\n", bad ? "FAILED" : "every surviving rank failed with an error naming rank 1");
  return bad ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "collectives";
  try {
    if (mode == "die") return die(argc > 2 ? std::atoi(argv[2]) : 2, argc > 3 ? std::atoi(argv[3]) : 10000);
    if (mode == "die-rank" && argc > 5)
      return die_rank(std::atoi(argv[2]), std::atoi(argv[3]), argv[4], std::atoi(argv[5]));
    dist::InitOptions o;
    const std::string store =
        (std::filesystem::temp_directory_path() / ("nccl_check_" + std::to_string(::getpid()))).string();
    if (!std::getenv("WORLD_SIZE")) {  // alone: a world of one
      o.init_method = "file://" + store;
      o.world_size = 1;
      o.rank = 0;
    }
    o.timeout = std::chrono::seconds(60);
    dist::init_process_group("nccl", o);
    const char* local = std::getenv("LOCAL_RANK");
    const loom::Device dev("cuda:" + std::string(local ? local : "0"));
    collectives(dev);
    const int rank = dist::get_rank(), world = dist::get_world_size();
    dist::destroy_process_group();
    std::filesystem::remove(store);
    std::printf("rank %d of %d: %s\n", rank, world, failures ? "FAILED" : "every collective matched its reference");
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED: %s\n", e.what());
    return 1;
  }
}
