// steady_memory — a long training loop must not grow the process.
//
// Trains train_mlp's model (64-256-256-10 MLP, Adam, batch 32) on the 8x8
// digits for `--steps` optimizer steps through the DataLoader (the training
// sample's loop, plus a no_grad evaluation each epoch), reads the resident
// set size from /proc/self/statm after a warm-up and at the end, and fails
// (exit 1) when it grew by more than `--max-growth-kib`.
//
// Why the default bound is 1 MiB over 10000 steps (about 7 s on one core):
// after the warm-up every cache loom keeps has reached its steady size (the
// CPU plugin's per-thread free lists are bounded at well under 128 KiB per
// thread, its large-block cache by a fixed byte budget; the autograd graph
// is freed every step), so what may still move is glibc's heap (arena top,
// fragmentation): 48 KiB measured over 3600 steps. A leak of even the
// smallest per-step object — one autograd node or one small TensorImpl, a
// few hundred bytes — passes 1 MiB within the 9000 measured steps (300 B x
// 9000 = 2.6 MiB), and a leaked activation (32 x 256 floats = 32 KiB) within
// 32 steps. `--leak-per-step N` keeps N float32 tensors of 16 elements alive
// per step, a deliberate leak the test suite uses to show the check fails.
//
//   build/bin/steady_memory [--steps 10000] [--warmup 1000] [--max-growth-kib 1024]
//                           [--device cpu] [--leak-per-step 0]
#include "digits.h"

#include <loom/autograd.h>
#include <loom/data.h>
#include <loom/loom.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace nn = loom::nn;
namespace optim = loom::optim;

namespace {

// Resident set size in KiB (second field of /proc/self/statm, in pages).
long resident_kib() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  if (!(statm >> size >> resident)) return -1;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

long flag(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}

std::string flag(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

}  // namespace

int main(int argc, char** argv) try {
  const long steps = flag(argc, argv, "--steps", 10000L);
  const long warmup = flag(argc, argv, "--warmup", 1000L);
  const long max_growth_kib = flag(argc, argv, "--max-growth-kib", 1024L);
  const long leak_per_step = flag(argc, argv, "--leak-per-step", 0L);
  const loom::Device device(flag(argc, argv, "--device", "cpu"));
  if (steps <= warmup || warmup < 1 || max_growth_kib < 0) {
    std::fprintf(stderr, "steady_memory: need --steps > --warmup >= 1 and --max-growth-kib >= 0\n");
    return 2;
  }

  loom::manual_seed(0);
  auto digits = loom_samples::load_digits();
  auto x_train = digits.x_train.to(device), y_train = digits.y_train.to(device);
  auto x_test = digits.x_test.to(device);
  nn::Sequential model(nn::Linear(64, 256), nn::ReLU(), nn::Linear(256, 256), nn::ReLU(),
                       nn::Linear(256, 10));
  model->to(device);
  optim::Adam optimizer(model->parameters(), optim::AdamOptions(1e-3));
  nn::CrossEntropyLoss loss_fn;
  loom::data::DataLoader loader(loom::data::TensorDataset(x_train, y_train),
                                loom::data::DataLoaderOptions().batch_size(32).shuffle(true).seed(0));

  std::vector<loom::Tensor> leaked;  // only with --leak-per-step
  long step = 0, before_kib = -1;
  float last_loss = 0;
  while (step < steps) {
    model->train();
    for (const auto& batch : loader) {
      optimizer.zero_grad();
      auto loss = loss_fn(model(batch.data), batch.target);
      loss.backward();
      optimizer.step();
      for (long i = 0; i < leak_per_step; ++i)
        leaked.push_back(loom::empty({16}, loom::DType::Float32, device));
      if (++step == warmup) before_kib = resident_kib();
      if (step == steps) {
        last_loss = loss.item<float>();
        break;
      }
    }
    model->eval();
    loom::autograd::NoGradGuard no_grad;
    (void)model(x_test).argmax(1).sum().item<int64_t>();
  }
  const long after_kib = resident_kib();
  const long growth = after_kib - before_kib;
  std::printf("steady_memory: %ld steps on %s, final loss %.4f; resident %ld KiB after %ld warm-up "
              "steps, %ld KiB at the end: growth %ld KiB (bound %ld KiB)\n",
              steps, device.str().c_str(), last_loss, before_kib, warmup, after_kib, growth,
              max_growth_kib);
  if (before_kib < 0 || after_kib < 0) {
    std::fprintf(stderr, "steady_memory: cannot read /proc/self/statm\n");
    return 1;
  }
  if (growth > max_growth_kib) {
    std::fprintf(stderr, "steady_memory: FAILED: resident memory grew by %ld KiB over %ld steps\n",
                 growth, steps - warmup);
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "steady_memory: %s\n", e.what());
  return 1;
}
