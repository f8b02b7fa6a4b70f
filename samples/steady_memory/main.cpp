// steady_memory — a long training loop must not grow the process.
//
// Trains train_mlp's model (64-256-256-10 MLP, Adam, batch 32) on the 8x8
// digits for `--steps` optimizer steps through the DataLoader (the training
// sample's loop, plus a no_grad evaluation each epoch), reads the process's
// anonymous resident memory from /proc/self/statm after a warm-up and at the
// end, and fails (exit 1) when it grew by more than `--max-growth-kib` and
// grew in each third of the measured steps: a leak is steady, while a single
// step up (glibc moving its heap top once, a late lazy allocation in a
// library) happens once and stops.
//
// Why anonymous memory, not the whole resident set: a leak lives in the heap
// or in anonymous mappings, while the file-backed part (the libraries' code
// and read-only data) moves with the machine, not with loom. On a loaded CI
// machine the kernel can reclaim clean library pages and the process faults
// them back in later. A CI run read 1088 KiB of whole-RSS growth where a
// quiet machine reads 0 KiB, anonymous or whole; the anonymous part is the
// one that measures loom. statm's `shared` field is exactly the file-backed
// (and shmem) pages, so resident - shared is the anonymous part.
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

// Resident memory in KiB, split into the anonymous part (heap, anonymous
// mappings: what a leak grows) and the file-backed part (statm's `shared`).
struct Resident {
  long anon_kib = -1;
  long file_kib = -1;
};

Resident resident() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident_pages = 0, shared_pages = 0;
  if (!(statm >> size >> resident_pages >> shared_pages)) return {};
  const long page_kib = sysconf(_SC_PAGESIZE) / 1024;
  return {(resident_pages - shared_pages) * page_kib, shared_pages * page_kib};
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
  auto loader = loom::data::make_data_loader(loom::data::TensorDataset(x_train, y_train),
                                             loom::data::samplers::SeededRandomSampler(static_cast<size_t>(x_train.size(0)), 0), 32);

  std::vector<loom::Tensor> leaked;  // only with --leak-per-step
  // Readings at the end of the warm-up and at each third of the measured
  // steps; thirds[3] is taken after the loop.
  const long measured = steps - warmup;
  const long third_ends[2] = {warmup + measured / 3, warmup + 2 * measured / 3};
  Resident thirds[4];
  long step = 0;
  float last_loss = 0;
  while (step < steps) {
    model->train();
    for (const auto& batch : *loader) {
      optimizer.zero_grad();
      auto loss = loss_fn(model(batch.data), batch.target);
      loss.backward();
      optimizer.step();
      for (long i = 0; i < leak_per_step; ++i)
        leaked.push_back(loom::empty({16}, loom::DType::Float32, device));
      ++step;
      if (step == warmup) thirds[0] = resident();
      if (step == third_ends[0]) thirds[1] = resident();
      if (step == third_ends[1]) thirds[2] = resident();
      if (step == steps) {
        last_loss = loss.item<float>();
        break;
      }
    }
    model->eval();
    loom::autograd::NoGradGuard no_grad;
    (void)model(x_test).argmax(1).sum().item<int64_t>();
  }
  thirds[3] = resident();
  const Resident& before = thirds[0];
  const Resident& after = thirds[3];
  const long growth = after.anon_kib - before.anon_kib;
  long third_growth[3];
  for (int i = 0; i < 3; ++i) third_growth[i] = thirds[i + 1].anon_kib - thirds[i].anon_kib;
  std::printf("steady_memory: %ld steps on %s, final loss %.4f; anonymous resident %ld KiB after "
              "%ld warm-up steps, %ld KiB at the end: growth %ld KiB (%ld, %ld, %ld per third; "
              "bound %ld KiB); file-backed %ld -> %ld KiB (not counted)\n",
              steps, device.str().c_str(), last_loss, before.anon_kib, warmup, after.anon_kib,
              growth, third_growth[0], third_growth[1], third_growth[2], max_growth_kib,
              before.file_kib, after.file_kib);
  for (const Resident& reading : thirds)
    if (reading.anon_kib < 0) {
      std::fprintf(stderr, "steady_memory: cannot read /proc/self/statm\n");
      return 1;
    }
  if (growth <= max_growth_kib) return 0;
  // Over the bound: a leak grows in every third. A quarter of the default
  // bound is 256 KiB per 3000-step third; the smallest leak named above
  // (300 B a step) grows about 880 KiB in one.
  bool steady = true;
  for (long g : third_growth) steady = steady && g > max_growth_kib / 4;
  if (!steady) {
    std::printf("steady_memory: a one-off rise of %ld KiB, not growth in every third: no leak\n",
                growth);
    return 0;
  }
  std::fprintf(stderr, "steady_memory: FAILED: anonymous resident memory grew by %ld KiB over %ld "
               "steps\n", growth, measured);
  return 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "steady_memory: %s\n", e.what());
  return 1;
}
