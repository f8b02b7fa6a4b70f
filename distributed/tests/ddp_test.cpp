// C++ DistributedDataParallel over gloo: ddp_worker ranks started by
// loom-run on 127.0.0.1 (see ddp_worker.cpp for what each scenario checks).
#include "spawn_util.h"

#include <catch2/catch.hpp>

#include <string>

namespace {

using namespace loom_dist_test;

Outcome run_ddp(const std::string& scenario, int world) {
  return run_one({{LOOM_RUN, "--nproc-per-node", std::to_string(world), "--master-port", std::to_string(free_port()),
                   LOOM_DDP_WORKER, scenario}},
                 std::chrono::seconds(120), std::string(LOOM_DIST_TEST_DIR) + "/ddp_" + scenario);
}

}  // namespace

TEST_CASE("DDP: N ranks x batch 32/N give one process's parameters after 20 steps", "[distributed][ddp]") {
  for (int world : {1, 2, 4}) {
    const Outcome o = run_ddp("sync", world);
    INFO("world " << world << ": " << describe(o) << "\n" << o.log);
    CHECK(succeeded(o));
  }
}

TEST_CASE("DDP: gradient accumulation under no_sync matches one process", "[distributed][ddp]") {
  const Outcome o = run_ddp("no_sync", 2);
  INFO(describe(o) << "\n" << o.log);
  CHECK(succeeded(o));
}

TEST_CASE("DDP: gradient_as_bucket_view makes .grad the bucket's memory, with the same parameters",
          "[distributed][ddp]") {
  const Outcome o = run_ddp("view", 2);
  INFO(describe(o) << "\n" << o.log);
  CHECK(succeeded(o));
}

TEST_CASE("DDP: unused parameters are named, or with find_unused_parameters keep no gradient unless a rank used them",
          "[distributed][ddp]") {
  const Outcome o = run_ddp("unused", 2);
  INFO(describe(o) << "\n" << o.log);
  CHECK(succeeded(o));
}
