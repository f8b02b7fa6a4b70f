// One rank of a multi-process test (collectives_test.cpp starts world_size
// of them): `collectives_worker [--backend NAME] <scenario> <rank>
// <world_size> <init_method> [timeout_ms]`. --backend is the communication
// backend init_process_group takes (default gloo; comm_abi_compat_test.cpp
// passes gloo_abi_1_0). Exits 0 when every check passed; otherwise prints
// what failed to stderr and exits 1. The scenarios:
//   collectives  every collective x dtype against a reference computed
//                locally; results identical on every rank by construction
//   init_only    init_process_group and exit (timeouts, ports in use: the
//                caller reads the error from stderr)
//   die_in_all_reduce  rank 1 SIGKILLs itself instead of joining the
//                second all_reduce; the others must fail, not hang
//   transport    prints how many of this process's threads run under
//                SCHED_BATCH (gloo's TCP loop thread should:
//                plugins/gloo/loop_thread.hpp) and how many same-host
//                shared-memory segments it maps (plugins/gloo/
//                shm_group.hpp), then checks an all_reduce, a reduce, a
//                broadcast and a barrier on tensors larger than one
//                shared-memory slot (several chunks, an uneven last one)
//   stall        rank 1 sleeps through the timeout before its all_reduce:
//                the others must fail naming it
#include "rank_checks.h"

#include <loom/distributed/distributed.h>
#include <loom/error.h>
#include <loom/loom.h>

#include <sched.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace dist = loom::distributed;
using loom::DType;
using loom::Tensor;

namespace {

using namespace loom_dist_test;

void collectives(int world) {
  const int me = dist::get_rank();
  const int64_t n = 10;
  const std::vector<DType> dtypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                     DType::Int32,   DType::Int64,   DType::Int16,   DType::Int8,
                                     DType::UInt8,   DType::Bool};
  for (DType dt : dtypes) {
    const bool is_bool = dt == DType::Bool;
    // all_reduce: each op against the local fold over every rank's values.
    for (dist::ReduceOp op : {dist::ReduceOp::Sum, dist::ReduceOp::Product, dist::ReduceOp::Min, dist::ReduceOp::Max}) {
      Tensor expected = values(0, n, dt);
      for (int r = 1; r < world; ++r) {
        const Tensor x = values(r, n, dt);
        switch (op) {
          case dist::ReduceOp::Sum: expected = is_bool ? loom::logical_or(expected, x) : expected + x; break;
          case dist::ReduceOp::Product: expected = is_bool ? loom::logical_and(expected, x) : expected * x; break;
          case dist::ReduceOp::Min: expected = loom::minimum(expected, x); break;
          case dist::ReduceOp::Max: expected = loom::maximum(expected, x); break;
          default: break;
        }
      }
      Tensor t = values(me, n, dt);
      dist::all_reduce(t, op);
      check(same(t, expected.to(dt)), label("all_reduce", dt) + " " + dist::to_string(op));
    }
    if (loom::is_floating_point(dt)) {
      Tensor sum = values(0, n, DType::Float64);
      for (int r = 1; r < world; ++r) sum = sum + values(r, n, DType::Float64);
      Tensor t = values(me, n, dt);
      dist::all_reduce(t, dist::ReduceOp::Avg);
      check(loom::allclose(t.to(DType::Float64), sum / world, 1e-2, 1e-2), label("all_reduce avg", dt));
    }
    // broadcast from the last rank.
    {
      Tensor t = values(me, n, dt);
      dist::broadcast(t, world - 1);
      check(same(t, values(world - 1, n, dt)), label("broadcast", dt));
    }
    // reduce (sum) to rank 0; other ranks keep their tensor.
    if (!is_bool) {
      Tensor t = values(me, n, dt);
      Tensor expected = values(0, n, dt);
      for (int r = 1; r < world; ++r) expected = expected + values(r, n, dt);
      dist::reduce(t, 0);
      check(me != 0 || same(t, expected.to(dt)), label("reduce", dt));
      check(me == 0 || same(t, values(me, n, dt)), label("reduce leaves non-roots", dt));
    }
    // all_gather (list and into one tensor).
    {
      std::vector<Tensor> list;
      for (int r = 0; r < world; ++r) list.push_back(loom::zeros({n}, dt));
      dist::all_gather(list, values(me, n, dt));
      for (int r = 0; r < world; ++r) check(same(list[static_cast<size_t>(r)], values(r, n, dt)), label("all_gather", dt));
      Tensor out = loom::zeros({world * n}, dt);
      dist::all_gather_into_tensor(out, values(me, n, dt));
      for (int r = 0; r < world; ++r)
        check(same(out.narrow(0, r * n, n), values(r, n, dt)), label("all_gather_into_tensor", dt));
    }
    // reduce_scatter_tensor: chunk `me` of the sum.
    if (!is_bool) {
      Tensor in = loom::cat({values(me, n, dt), values(me + 1, n, dt), values(me + 2, n, dt), values(me + 3, n, dt)}, 0)
                      .narrow(0, 0, world * n)
                      .contiguous();
      Tensor expected = loom::zeros({n}, DType::Float64);
      for (int r = 0; r < world; ++r) expected = expected + values(r + me, n, DType::Float64);
      Tensor out = loom::zeros({n}, dt);
      dist::reduce_scatter_tensor(out, in);
      check(same(out, expected.to(dt)), label("reduce_scatter_tensor", dt));
    }
    // all_to_all_single: chunk j of rank r is values(r * 10 + j).
    {
      std::vector<Tensor> chunks;
      for (int j = 0; j < world; ++j) chunks.push_back(values(me * 10 + j, n, dt));
      Tensor out = loom::zeros({world * n}, dt);
      Tensor in = loom::cat(chunks, 0);
      dist::all_to_all_single(out, in);
      for (int j = 0; j < world; ++j)
        check(same(out.narrow(0, j * n, n), values(j * 10 + me, n, dt)), label("all_to_all_single", dt));
    }
    // gather to the last rank, scatter from rank 0.
    {
      std::vector<Tensor> list;
      for (int r = 0; r < world; ++r) list.push_back(loom::zeros({n}, dt));
      dist::gather(values(me, n, dt), me == world - 1 ? &list : nullptr, world - 1);
      if (me == world - 1)
        for (int r = 0; r < world; ++r) check(same(list[static_cast<size_t>(r)], values(r, n, dt)), label("gather", dt));
      std::vector<Tensor> parts;
      for (int r = 0; r < world; ++r) parts.push_back(values(r + 20, n, dt));
      Tensor out = loom::zeros({n}, dt);
      dist::scatter(out, me == 0 ? &parts : nullptr, 0);
      check(same(out, values(me + 20, n, dt)), label("scatter", dt));
    }
  }
  // A non-contiguous tensor (a transpose) is reduced in place.
  {
    Tensor base = loom::arange(12, DType::Float32).reshape({3, 4}).mul(me + 1);
    Tensor t = base.t();
    dist::all_reduce(t);
    const double factor = world * (world + 1) / 2.0;
    check(same(t, loom::arange(12, DType::Float32).reshape({3, 4}).t().mul(factor)), "all_reduce of a transpose");
  }
  // async_op: start several, wait later.
  {
    std::vector<Tensor> ts;
    std::vector<std::shared_ptr<dist::Work>> works;
    for (int k = 0; k < 4; ++k) ts.push_back(loom::full({1000}, double(k + me), DType::Float32));
    for (auto& t : ts) works.push_back(dist::all_reduce(t, dist::ReduceOp::Sum, nullptr, true));
    for (size_t k = 0; k < works.size(); ++k) {
      works[k]->wait();
      const double expected = world * double(k) + world * (world - 1) / 2.0;
      check(same(ts[k], loom::full({1000}, expected, DType::Float32)), "async all_reduce " + std::to_string(k));
      check(works[k]->is_completed(), "a waited work is completed");
    }
  }
  // send / recv around a ring (even ranks send first).
  if (world > 1) {
    const int next = (me + 1) % world, prev = (me + world - 1) % world;
    Tensor out = values(me, n, DType::Float32), in = loom::zeros({n});
    auto s = dist::isend(out, next, nullptr, 7);
    dist::recv(in, prev, nullptr, 7);
    s->wait();
    check(same(in, values(prev, n, DType::Float32)), "send/recv ring");
  }
  // A send only two ranks see, then collectives: their numbering (which
  // gloo tags messages with) must stay equal on every rank.
  if (world > 1) {
    if (me == 0) dist::send(loom::arange(5, DType::Float32), 1, nullptr, 3);
    if (me == 1) {
      Tensor r = loom::zeros({5});
      dist::recv(r, 0, nullptr, 3);
      check(same(r, loom::arange(5, DType::Float32)), "a one-way send");
    }
    Tensor t = loom::ones({4});
    dist::all_reduce(t);
    check(same(t, loom::full({4}, double(world), DType::Float32)), "all_reduce after a one-way send");
  }
  // A subgroup of the even ranks.
  {
    std::vector<int> evens;
    for (int r = 0; r < world; r += 2) evens.push_back(r);
    auto g = dist::new_group(evens);
    check((g != nullptr) == (me % 2 == 0), "new_group membership");
    if (g) {
      Tensor t = loom::full({3}, double(me), DType::Int64);
      dist::all_reduce(t, dist::ReduceOp::Sum, g.get());
      double expected = 0;
      for (int r : evens) expected += r;
      check(same(t, loom::full({3}, expected, DType::Int64)), "all_reduce in a subgroup");
      Tensor b = loom::full({2}, double(me), DType::Float32);
      dist::broadcast(b, evens.back(), g.get());
      check(same(b, loom::full({2}, double(evens.back()), DType::Float32)), "broadcast in a subgroup (global src)");
    }
  }
  // Bad arguments are errors naming what is wrong.
  {
    Tensor t = loom::zeros({4});
    try {
      dist::broadcast(t, world + 3);
      check(false, "broadcast from a rank outside the world is refused");
    } catch (const loom::Error& e) {
      check(std::string(e.what()).find("src " + std::to_string(world + 3)) != std::string::npos,
            std::string("the error names the src rank: ") + e.what());
    }
    Tensor small = loom::zeros({3});
    try {
      dist::all_gather_into_tensor(small, t);
      check(false, "all_gather_into_tensor into a too-small output is refused");
    } catch (const loom::Error& e) {
      check(std::string(e.what()).find("world_size") != std::string::npos, std::string("names the sizes: ") + e.what());
    }
  }
  dist::barrier();
}

// The threads of this process whose scheduling policy (field 41 of
// /proc/self/task/<tid>/stat, after the parenthesised name) is SCHED_BATCH.
int threads_under_sched_batch() {
  int count = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));  // field 3 (state) onwards
    std::string field;
    for (int f = 3; f <= 41 && fields >> field; ++f)
      if (f == 41 && std::stoi(field) == SCHED_BATCH) ++count;
  }
  return count;
}

// Mappings of gloo's same-host segments in /proc/self/maps (unlinked once
// every rank opened them, so listed as deleted).
int shared_memory_segments() {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);)
    if (line.find("/dev/shm/loom-gloo-") != std::string::npos) ++count;
  return count;
}

// all_reduce, reduce, broadcast and barrier of 5M + 3 float32 (20 MB: more
// than one 4 MiB slot, the last chunk uneven) against local references.
void large_collectives(int world) {
  const int me = dist::get_rank();
  const int64_t n = (int64_t{5} << 20) + 3;
  auto rank_values = [n](int r) { return loom::arange(n, DType::Float32).remainder(7) + static_cast<double>(r); };
  Tensor expected = rank_values(0);
  for (int r = 1; r < world; ++r) expected = expected + rank_values(r);
  Tensor t = rank_values(me);
  dist::all_reduce(t);
  check(same(t, expected), "all_reduce of 5M + 3 elements");
  Tensor r = rank_values(me);
  dist::reduce(r, 0);
  if (me == 0) check(same(r, expected), "reduce of 5M + 3 elements to rank 0");
  Tensor b = me == 1 ? rank_values(1) : loom::zeros({n});
  dist::broadcast(b, 1);
  check(same(b, rank_values(1)), "broadcast of 5M + 3 elements from rank 1");
  dist::barrier();
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "gloo";
  if (argc > 2 && std::string(argv[1]) == "--backend") {
    backend = argv[2];
    argv[2] = argv[0];
    argv += 2;
    argc -= 2;
  }
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s [--backend NAME] <scenario> <rank> <world_size> <init_method> [timeout_ms]\n",
                 argv[0]);
    return 2;
  }
  const std::string scenario = argv[1];
  dist::InitOptions o;
  // "-": from the environment (RANK, WORLD_SIZE: loom-run sets them).
  o.rank = std::string(argv[2]) == "-" ? -1 : std::atoi(argv[2]);
  o.world_size = std::string(argv[3]) == "-" ? -1 : std::atoi(argv[3]);
  if (scenario == "fail_rank1") {  // for loom-run: rank 1 fails at once, the others would wait long
    const char* r = std::getenv("RANK");
    if (r && std::string(r) == "1") return 3;
    std::this_thread::sleep_for(std::chrono::seconds(120));
    return 0;
  }
  o.init_method = argv[4];
  o.timeout = std::chrono::milliseconds(argc > 5 ? std::atoll(argv[5]) : 30000);
  try {
    dist::init_process_group(backend, o);
    if (scenario == "collectives") {
      collectives(dist::get_world_size());
    } else if (scenario == "die_in_all_reduce") {
      Tensor t = loom::ones({1 << 16});
      dist::all_reduce(t);
      if (o.rank == 1) std::raise(SIGKILL);
      try {
        dist::all_reduce(t);  // rank 1 is gone: must fail
      } catch (const loom::Error& e) {
        std::fprintf(stderr, "rank %d: error: %s\n", o.rank, e.what());
        // The group was aborted: the next collective fails at once, not
        // after its timeout.
        const auto t0 = std::chrono::steady_clock::now();
        try {
          dist::all_reduce(t);
        } catch (const loom::Error& again) {
          const auto ms =
              std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
          std::fprintf(stderr, "rank %d: then: %s (after %lld ms)\n", o.rank, again.what(), static_cast<long long>(ms));
          return ms < 2000 && std::string(again.what()).find("aborted") != std::string::npos ? 1 : 4;
        }
        return 4;
      }
      std::fprintf(stderr, "rank %d: the all_reduce without rank 1 completed\n", o.rank);
      return 3;
    } else if (scenario == "transport") {
      std::printf("threads under SCHED_BATCH: %d\n", threads_under_sched_batch());
      std::printf("shared-memory segments: %d\n", shared_memory_segments());
      large_collectives(dist::get_world_size());
    } else if (scenario == "stall") {
      Tensor t = loom::ones({1024});
      if (o.rank == 1) std::this_thread::sleep_for(o.timeout + std::chrono::seconds(2));
      dist::all_reduce(t);
      std::fprintf(stderr, "rank %d: the all_reduce completed\n", o.rank);
      return 3;
    } else if (scenario == "desync") {
      // Rank 1 all_reduces one element more than the others: never paired,
      // every rank fails after the timeout naming the ranks and their ops.
      Tensor t = loom::ones({o.rank == 1 ? 11 : 10});
      dist::all_reduce(t);
      std::fprintf(stderr, "rank %d: the desynchronised all_reduce completed\n", o.rank);
      return 3;
    } else if (scenario != "init_only") {
      std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
      return 2;
    }
    dist::destroy_process_group();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: error: %s\n", o.rank, e.what());
    return 1;
  }
  return failures ? 1 : 0;
}
