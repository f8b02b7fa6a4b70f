#include "train_loop.h"

#include "digits.h"

#include <loom/autograd.h>
#include <loom/data.h>
#include <loom/distributed/distributed.h>
#include <loom/nn/parallel/distributed.h>
#include <loom/io.h>
#include <loom/loom.h>
#include <loom/registry.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>

namespace loom_samples {
namespace {

namespace nn = loom::nn;
using Clock = std::chrono::steady_clock;

struct Flags {
  std::string device;
  int epochs = 0;
  std::string out;
  std::string data = kDigitsCsv;
  uint64_t seed = 0;
  double min_accuracy = 0.97;  // the target, as samples/python/train_digits.py checks
  bool distributed = false;
  std::string compare_with;
};

namespace dist = loom::distributed;

// The global batch: one process takes it whole, N processes a 1/N share each.
constexpr int64_t kGlobalBatch = 32;

std::string usage(const Recipe& r) {
  return "usage: " + r.name +
         " [--device TYPE] [--epochs N] [--out PATH] [--seed S] [--min-accuracy A] [--data PATH]\n"
         "  --device        cpu, sim, ... (default: the best available)\n"
         "  --epochs        passes over the training set (default " +
         std::to_string(r.default_epochs) +
         ")\n"
         "  --out           checkpoint file, safetensors (default " + r.name + ".safetensors)\n"
         "  --seed          split, initialisation and shuffling (default 0)\n"
         "  --min-accuracy  exit 1 when the test accuracy is below this (default 0.97)\n"
         "  --data          the digits CSV (default " + std::string(kDigitsCsv) + ";\n"
         "                  when absent, a seeded synthetic set is used)\n"
         "  --distributed   data-parallel over the processes loom-run started (gloo,\n"
         "                  env://): each trains on its share of every global batch of " +
         std::to_string(kGlobalBatch) +
         "\n"
         "  --compare-with  exit 1 unless the test accuracy is within one test example\n"
         "                  of the model saved at this path (a one-process run's)\n";
}

// Throws std::invalid_argument naming the flag when a value is missing or bad.
Flags parse_flags(const Recipe& r, int argc, char** argv) {
  Flags f;
  f.epochs = r.default_epochs;
  f.out = r.name + ".safetensors";
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") throw std::invalid_argument("");
    if (flag == "--distributed") {
      f.distributed = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value (or is unknown)");
    std::string value = argv[++i];
    auto number = [&](auto parse) {
      try {
        size_t used = 0;
        auto v = parse(value, &used);
        if (used == value.size()) return v;
      } catch (const std::exception&) {
      }
      throw std::invalid_argument(flag + ": '" + value + "' is not a valid number");
    };
    if (flag == "--device") {
      f.device = value;
    } else if (flag == "--epochs") {
      f.epochs = number([](const std::string& s, size_t* n) { return std::stoi(s, n); });
      if (f.epochs < 1) throw std::invalid_argument("--epochs must be at least 1, got " + value);
    } else if (flag == "--out") {
      f.out = value;
    } else if (flag == "--data") {
      f.data = value;
    } else if (flag == "--seed") {
      if (value.starts_with('-')) throw std::invalid_argument("--seed must not be negative");
      f.seed = number([](const std::string& s, size_t* n) { return std::stoull(s, n); });
    } else if (flag == "--compare-with") {
      f.compare_with = value;
    } else if (flag == "--min-accuracy") {
      f.min_accuracy = number([](const std::string& s, size_t* n) { return std::stod(s, n); });
    } else {
      throw std::invalid_argument("unknown flag " + flag);
    }
  }
  if (f.device.empty()) f.device = best_device_type();
  return f;
}

// Correct predictions of `model` on (x, y), in eval mode and without a graph.
int64_t count_correct(nn::Sequential& model, const loom::Tensor& x, const loom::Tensor& y) {
  loom::autograd::NoGradGuard no_grad;
  bool was_training = model->is_training();
  model->eval();
  int64_t correct = model(x).argmax(1).eq(y).sum().item<int64_t>();
  model->train(was_training);
  return correct;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

std::string best_device_type() {
  auto& registry = loom::registry::Registry::global();
  auto plugins = registry.plugins();
  std::stable_sort(plugins.begin(), plugins.end(),
                   [](const auto& a, const auto& b) { return a.priority > b.priority; });
  for (const auto& p : plugins) {
    if (p.state == loom::registry::PluginState::Failed) continue;
    for (const auto& type : p.device_types) {
      if (type == "cpu" || type == "sim") continue;
      std::string why;  // a plugin that fails to load is simply not the best one
      if (registry.load(p.name, why) && loom::device_count(type) > 0) return type;
    }
  }
  return "cpu";
}

namespace {

// The test accuracy of the model saved at `path` (a one-process run's).
double saved_accuracy(const Recipe& recipe, const std::string& path, const loom::Device& device,
                      const loom::Tensor& x_test, const loom::Tensor& y_test) {
  nn::Sequential model = recipe.make_model();
  model->to(device);
  model->load_state_dict(loom::io::load(path, device));
  return static_cast<double>(count_correct(model, x_test, y_test)) / static_cast<double>(x_test.size(0));
}

int train_save_reload(const Recipe& recipe, const Flags& flags) {
  loom::Device device(flags.device);
  loom::manual_seed(flags.seed);
  int rank = 0, world = 1;
  if (flags.distributed) {
    if (device.type_name() != "cpu")
      throw std::invalid_argument("--distributed trains over gloo, on cpu tensors: pass --device cpu");
    dist::init_process_group("gloo");  // RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from loom-run
    rank = dist::get_rank();
    world = dist::get_world_size();
    if (kGlobalBatch % world != 0)
      throw std::invalid_argument("--distributed: the global batch of " + std::to_string(kGlobalBatch) +
                                  " does not split over " + std::to_string(world) + " processes");
  }
  const bool leader = rank == 0;  // prints, saves and checks

  DigitsSplit digits = load_digits(0.2, flags.seed, flags.data);
  std::vector<int64_t> shape{-1};
  shape.insert(shape.end(), recipe.example_shape.begin(), recipe.example_shape.end());
  auto x_train = digits.x_train.reshape(shape).to(device), y_train = digits.y_train.to(device);
  auto x_test = digits.x_test.reshape(shape).to(device), y_test = digits.y_test.to(device);
  const auto n_train = x_train.size(0), n_test = x_test.size(0);
  if (leader) {
    std::cout << recipe.name << ": " << (digits.synthetic ? "synthetic digits" : "digits") << ", " << n_train
              << " train / " << n_test << " test, device " << device << ", " << flags.epochs
              << (flags.epochs == 1 ? " epoch" : " epochs");
    if (flags.distributed) std::cout << ", " << world << " processes x batch " << kGlobalBatch / world;
    std::cout << "\n";
  }

  nn::Sequential model = recipe.make_model();
  model->to(device);
  // Broadcasts rank 0's initial values and averages every gradient over
  // the ranks during backward.
  std::optional<loom::nn::parallel::DistributedDataParallel<nn::Sequential>> ddp;
  if (flags.distributed) ddp.emplace(model);
  auto optimizer = recipe.make_optimizer(model->parameters());
  nn::CrossEntropyLoss loss_fn;
  // One process visits SeededRandomSampler's order in batches of 32; rank r
  // of N takes elements r, r + N, ... of that same order in batches of
  // 32 / N, so the ranks' k-th batches together are the one-process k-th
  // batch and the averaged gradient is its gradient (up to float rounding,
  // and the short last batch, split 15 + 14 rather than meaned over 29).
  namespace samplers = loom::data::samplers;
  auto loader = loom::data::make_data_loader(
      loom::data::TensorDataset(x_train, y_train),
      samplers::DistributedRandomSampler(static_cast<size_t>(n_train), static_cast<size_t>(world),
                                         static_cast<size_t>(rank), /*allow_duplicates=*/false, flags.seed),
      kGlobalBatch / world);

  auto run_start = Clock::now();
  double train_seconds = 0;
  for (int epoch = 1; epoch <= flags.epochs; ++epoch) {
    model->train();
    loader->sampler().set_epoch(static_cast<size_t>(epoch - 1));
    auto start = Clock::now();
    loom::Tensor loss_sum = loom::zeros({}, loom::DType::Float32).to(device);  // no sync per batch
    for (const auto& batch : *loader) {
      optimizer->zero_grad();
      auto loss = loss_fn(ddp ? (*ddp)(batch.data) : model(batch.data), batch.target);
      loss.backward();
      optimizer->step();
      loss_sum.add_(loss.detach() * static_cast<double>(batch.target.size(0)));
    }
    if (flags.distributed) dist::all_reduce(loss_sum);  // every rank's share of the epoch's loss
    double loss = loss_sum.item<float>() / static_cast<double>(n_train);
    double seconds = seconds_since(start);
    train_seconds += seconds;
    if (leader) {
      std::printf("epoch %2d/%d  loss %.4f  train acc %.4f  test acc %.4f  %.0f samples/s\n", epoch, flags.epochs,
                  loss, static_cast<double>(count_correct(model, x_train, y_train)) / n_train,
                  static_cast<double>(count_correct(model, x_test, y_test)) / n_test,
                  static_cast<double>(n_train) / seconds);
      std::fflush(stdout);
    }
  }
  if (!leader) {
    ddp.reset();
    dist::destroy_process_group();
    return 0;  // the ranks hold the same model: rank 0 saves and checks it
  }
  int64_t trained_correct = count_correct(model, x_test, y_test);

  // Save, then evaluate a fresh model that knows only the file.
  loom::io::save(flags.out, model->state_dict(),
                 {{"sample", recipe.name}, {"epochs", std::to_string(flags.epochs)}});
  nn::Sequential reloaded = recipe.make_model();
  reloaded->to(device);
  reloaded->load_state_dict(loom::io::load(flags.out, device));
  int64_t reloaded_correct = count_correct(reloaded, x_test, y_test);

  double accuracy = static_cast<double>(reloaded_correct) / n_test;
  std::printf("training %.2f s (%.2f s in all)\n", train_seconds, seconds_since(run_start));
  std::printf("saved %s; reloaded model: test accuracy %.4f (trained model: %.4f)\n",
              flags.out.c_str(), accuracy, static_cast<double>(trained_correct) / n_test);
  if (flags.distributed) {
    ddp.reset();
    dist::destroy_process_group();
  }
  if (reloaded_correct != trained_correct) {
    std::cerr << recipe.name << ": the reloaded model differs from the trained one\n";
    return 1;
  }
  if (accuracy < flags.min_accuracy) {
    std::cerr << recipe.name << ": test accuracy " << accuracy << " is below "
              << flags.min_accuracy << "\n";
    return 1;
  }
  if (!flags.compare_with.empty()) {
    const double theirs = saved_accuracy(recipe, flags.compare_with, device, x_test, y_test);
    std::printf("the model at %s: test accuracy %.4f\n", flags.compare_with.c_str(), theirs);
    if (std::abs(theirs - accuracy) * static_cast<double>(n_test) > 1.0 + 1e-9) {
      std::cerr << recipe.name << ": test accuracy " << accuracy << " differs from " << theirs << " (the model at "
                << flags.compare_with << ") by more than one test example\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

int run_training_sample(const Recipe& recipe, int argc, char** argv) {
  Flags flags;
  try {
    flags = parse_flags(recipe, argc, argv);
  } catch (const std::invalid_argument& e) {
    if (*e.what()) std::cerr << recipe.name << ": " << e.what() << "\n";
    std::cerr << usage(recipe);
    return 2;
  }
  try {
    return train_save_reload(recipe, flags);
  } catch (const std::exception& e) {  // loom::Error: a bad file, device, checkpoint ...
    std::cerr << recipe.name << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace loom_samples
