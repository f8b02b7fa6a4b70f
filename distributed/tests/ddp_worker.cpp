// One rank of the C++ DistributedDataParallel tests (ddp_test.cpp starts
// them with loom-run, so RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT come
// from the environment): `ddp_worker <scenario>`. Exits 0 when every check
// passed; otherwise prints what failed to stderr and exits 1.
//   sync      20 SGD steps, each rank its share of a batch of 32; rank 0
//             checks the parameters against one local process trained on
//             the whole batch (float32 tolerance), every rank that it holds
//             rank 0's parameters exactly
//   no_sync   the same with each rank's share in two halves, the first
//             backward under no_sync (gradient accumulation)
//   view      sync and no_sync with gradient_as_bucket_view: .grad is the
//             bucket's memory, the parameters the same
//   unused    a parameter no forward uses: backward fails naming it; with
//             find_unused_parameters its .grad stays undefined, and one only
//             rank 0 uses gets the average (rank 0's gradient / world)
#include "rank_checks.h"

#include <loom/distributed/distributed.h>
#include <loom/error.h>
#include <loom/loom.h>
#include <loom/nn/parallel/distributed.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace dist = loom::distributed;
namespace nn = loom::nn;
using loom::Tensor;
using loom::nn::parallel::DistributedDataParallel;
using loom::nn::parallel::DistributedDataParallelOptions;

namespace {

using loom_dist_test::check;
using loom_dist_test::failures;

nn::Sequential model(int rank) {
  loom::manual_seed(static_cast<uint64_t>(rank) * 7 + 1);  // different on each rank: DDP must broadcast rank 0's
  return nn::Sequential(nn::Linear(8, 16), nn::Tanh(), nn::Linear(16, 4));
}

double max_difference(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item<double>(); }

// Global batches of 32 rows; rank r of `world` takes rows [r * 32 / world, (r + 1) * 32 / world).
void equivalence(bool accumulate, bool as_view) {
  const int rank = dist::get_rank(), world = dist::get_world_size();
  loom::manual_seed(1234);
  const Tensor X = loom::randn({20, 32, 8}), Y = loom::randn({20, 32, 4});
  nn::MSELoss loss_fn;
  const int64_t share = 32 / world;

  nn::Sequential reference = model(0);
  loom::optim::SGD reference_opt(reference->parameters(), loom::optim::SGDOptions(0.1));
  if (rank == 0)
    for (int64_t s = 0; s < 20; ++s) {
      reference_opt.zero_grad();
      Tensor loss;
      if (accumulate) {  // each rank's share in two halves, summed, averaged over the ranks
        const int64_t half = share / 2;
        for (int64_t c = 0; c < 2 * world; ++c) {
          Tensor part = loss_fn(reference(X[s].narrow(0, c * half, half)), Y[s].narrow(0, c * half, half));
          loss = loss.defined() ? loss + part : part;
        }
        loss = loss / static_cast<double>(world);
      } else {
        loss = loss_fn(reference(X[s]), Y[s]);
      }
      loss.backward();
      reference_opt.step();
    }

  nn::Sequential net = model(rank);
  // Small buckets: several all-reduces per step, finishing out of order.
  DistributedDataParallel ddp(
      net, DistributedDataParallelOptions().bucket_cap_mb(0.0005).gradient_as_bucket_view(as_view));
  check(ddp.reducer().bucket_indices().size() > 1, "bucket_cap_mb 0.0005 makes several buckets");
  loom::optim::SGD opt(net->parameters(), loom::optim::SGDOptions(0.1));
  for (int64_t s = 0; s < 20; ++s) {
    // .grad undefined, and (odd steps) zeroed in place — a bucket's view.
    opt.zero_grad(/*set_to_none=*/s % 2 == 0);
    const Tensor x = X[s].narrow(0, rank * share, share), y = Y[s].narrow(0, rank * share, share);
    if (accumulate) {
      const int64_t half = share / 2;
      {
        auto no_sync = ddp.no_sync();
        loss_fn(ddp(x.narrow(0, 0, half)), y.narrow(0, 0, half)).backward();
      }
      loss_fn(ddp(x.narrow(0, half, half)), y.narrow(0, half, half)).backward();
    } else {
      loss_fn(ddp(x), y).backward();
    }
    if (as_view)
      for (const Tensor& p : net->parameters()) {
        bool in_a_bucket = false;
        const char* g = static_cast<const char*>(p.grad().data_ptr());
        for (const Tensor& flat : ddp.reducer().bucket_tensors()) {
          const char* f = static_cast<const char*>(flat.data_ptr());
          in_a_bucket = in_a_bucket || (g >= f && g < f + flat.numel() * flat.element_size());
        }
        check(in_a_bucket, "with gradient_as_bucket_view, .grad is a view of a bucket");
      }
    opt.step();
  }

  const auto mine = net->named_parameters();
  const auto theirs = reference->parameters();
  for (size_t i = 0; i < mine.size(); ++i) {
    if (rank == 0) {
      const double d = max_difference(mine[i].value(), theirs[i]);
      check(d <= 1e-5, mine[i].key() + " differs from one process's by " + std::to_string(d));
    }
    Tensor first = mine[i].value().detach().clone();
    dist::broadcast(first, 0);
    check(max_difference(first, mine[i].value()) == 0, mine[i].key() + " differs from rank 0's");
  }
}

struct ThreeLayers : nn::Module {
  ThreeLayers() {
    loom::manual_seed(3);
    used = register_module("used", nn::Linear(4, 2));
    unused = register_module("unused", nn::Linear(4, 2));
    rank0 = register_module("rank0", nn::Linear(4, 2));
  }
  Tensor forward(const Tensor& x, bool with_rank0) { return with_rank0 ? used(x) + rank0(x) : used(x); }
  nn::Linear used{nullptr}, unused{nullptr}, rank0{nullptr};
};

void unused_parameters() {
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const Tensor x = loom::ones({3, 4});
  {
    auto net = std::make_shared<ThreeLayers>();
    DistributedDataParallel ddp(net);
    std::string message;
    try {
      ddp(x, true).sum().backward();
    } catch (const loom::Error& e) {
      message = e.what();
    }
    check(message.find("unused.weight, unused.bias") != std::string::npos &&
              message.find("find_unused_parameters") != std::string::npos,
          "backward names the parameters without a gradient, got: " + message);
  }
  auto net = std::make_shared<ThreeLayers>();
  DistributedDataParallel ddp(net, DistributedDataParallelOptions().find_unused_parameters(true));
  for (int step = 0; step < 2; ++step) {  // the second pass starts clean after the first
    ddp(x, rank == 0).sum().backward();
    check(!net->unused->weight.grad().defined(), "a parameter no rank used keeps no gradient");
    check(max_difference(net->used->bias.grad(), loom::full({2}, 3.0 * (step + 1))) == 0,
          "the used parameters' gradients are averaged (and accumulate across backward passes)");
    check(max_difference(net->rank0->bias.grad(), loom::full({2}, 3.0 * (step + 1) / world)) == 0,
          "a parameter only rank 0 used gets rank 0's gradient averaged over the ranks");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ddp_worker sync|no_sync|view|unused (under loom-run)\n");
    return 2;
  }
  const std::string scenario = argv[1];
  loom::set_num_threads(1);  // the ranks share this machine's cores
  try {
    dist::init_process_group("gloo");
    if (scenario == "sync")
      equivalence(false, false);
    else if (scenario == "no_sync")
      equivalence(true, false);
    else if (scenario == "view") {
      equivalence(false, true);
      equivalence(true, true);
    }
    else if (scenario == "unused")
      unused_parameters();
    else
      check(false, "unknown scenario " + scenario);
    dist::destroy_process_group();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %s: FAILED: %s\n", std::getenv("RANK") ? std::getenv("RANK") : "?", e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
