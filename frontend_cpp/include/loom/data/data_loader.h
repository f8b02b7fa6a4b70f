// loom/data/data_loader.h — batches of a dataset in a sampler's order,
// optionally built ahead by worker threads (torch::data::make_data_loader):
//
//   auto loader = loom::data::make_data_loader(
//       std::move(dataset), loom::data::DataLoaderOptions().batch_size(64).workers(2));
//   for (auto& batch : *loader) train(batch.data, batch.target);
//
// The sampler is RandomSampler unless named (make_data_loader<
// samplers::SequentialSampler>(...)) or given. Each range-for over the loader
// is one epoch. With workers > 0, that many threads build batches ahead of
// the loop (at most max_jobs, default workers * prefetch, waiting), and the
// loop still sees them in the sampler's order. Leaving the loop early (or
// destroying the loader) stops and joins the threads. A batch that fails to
// build rethrows in the loop as loom::Error naming the batch index.
#pragma once

#include <loom/autograd.h>
#include <loom/data/datasets/base.h>
#include <loom/data/samplers.h>
#include <loom/error.h>
#include <loom/options.h>

#include <any>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace loom::data {

struct DataLoaderOptions {
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // NOLINT: implicit, as libtorch's
  LOOM_ARG(size_t, batch_size) = 1;
  LOOM_ARG(size_t, workers) = 0;   // 0: batches are built in the loop's thread
  LOOM_ARG(size_t, prefetch) = 2;  // batches each worker may build ahead
  // Batches built ahead in all (overrides workers * prefetch).
  LOOM_ARG(std::optional<size_t>, max_jobs);
  // How long the loop waits for a worker's batch before throwing.
  LOOM_ARG(std::optional<std::chrono::milliseconds>, timeout);
  LOOM_ARG(bool, drop_last) = false;  // skip a last, incomplete batch
  // loom always hands batches out in the sampler's order; false is accepted
  // (libtorch then allows any order) and changes nothing.
  LOOM_ARG(bool, enforce_ordering) = true;
};

namespace detail {

// One epoch's batches, built in order by `build` on this thread or ahead on
// worker threads (data_loader.cpp). Batches travel as std::any so the
// threading lives in one compiled place for every batch type.
class EpochRun {
 public:
  using Build = std::function<std::any(const std::vector<size_t>& indices)>;
  EpochRun(Build build, std::vector<std::vector<size_t>> batches, const DataLoaderOptions& options);
  ~EpochRun();
  EpochRun(const EpochRun&) = delete;
  EpochRun& operator=(const EpochRun&) = delete;
  bool finished() const;
  std::any next();  // the next batch in order

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The index lists of one epoch: the sampler's batches, minus a short last
// one under drop_last.
std::vector<std::vector<size_t>> epoch_batches(samplers::Sampler& sampler, size_t dataset_size,
                                               const DataLoaderOptions& options);
void check_options(const DataLoaderOptions& options);

}  // namespace detail

template <class Dataset, class Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = std::vector<size_t>;

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : dataset_(std::make_shared<Dataset>(std::move(dataset))), sampler_(std::move(sampler)), options_(options) {
    detail::check_options(options_);
    LOOM_CHECK(dataset_->size().has_value(), "data: a stateless DataLoader needs a dataset whose size() is known");
  }

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = BatchType;
    using difference_type = std::ptrdiff_t;
    using pointer = BatchType*;
    using reference = BatchType&;

    Iterator() = default;
    BatchType& operator*() { return *current_; }
    BatchType* operator->() { return &*current_; }
    Iterator& operator++() {
      if (!run_ || run_->finished()) {
        run_.reset();  // stops the workers
        current_.reset();
        return *this;
      }
      try {
        current_ = std::any_cast<BatchType>(run_->next());
      } catch (...) {
        run_.reset();
        throw;
      }
      return *this;
    }
    bool operator==(const Iterator& other) const { return !run_ == !other.run_; }
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    friend class StatelessDataLoader;
    explicit Iterator(std::shared_ptr<detail::EpochRun> run) : run_(std::move(run)) { ++*this; }
    std::shared_ptr<detail::EpochRun> run_;  // shared by copies; the last one stops the workers
    std::optional<BatchType> current_;
  };

  // Starts the next epoch.
  Iterator begin() {
    auto batches = detail::epoch_batches(sampler_, *dataset_->size(), options_);
    if (batches.empty()) return Iterator();
    std::shared_ptr<Dataset> dataset = dataset_;
    auto build = [dataset](const std::vector<size_t>& indices) -> std::any {
      autograd::NoGradGuard no_grad;
      return std::any(dataset->get_batch(typename Dataset::BatchRequestType(indices)));
    };
    return Iterator(std::make_shared<detail::EpochRun>(std::move(build), std::move(batches), options_));
  }
  Iterator end() { return Iterator(); }

  const DataLoaderOptions& options() const { return options_; }
  Dataset& dataset() { return *dataset_; }
  Sampler& sampler() { return sampler_; }
  // Batches per epoch (for a sampler that visits every example once).
  size_t size() const {
    const size_t n = *dataset_->size(), b = options_.batch_size();
    return options_.drop_last() ? n / b : (n + b - 1) / b;
  }
  void join() {}  // workers are joined at the end of each epoch

 private:
  std::shared_ptr<Dataset> dataset_;
  Sampler sampler_;
  DataLoaderOptions options_;
};

template <class T>
concept SamplerType = std::is_base_of_v<samplers::Sampler, T>;

// A loader over `dataset` visiting it in `Sampler`'s order (built for the
// dataset's size).
template <SamplerType Sampler = samplers::RandomSampler, class Dataset>
  requires(!Dataset::is_stateful)
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions options = {}) {
  const std::optional<size_t> size = dataset.size();
  LOOM_CHECK(size.has_value(), "data: make_data_loader needs a dataset whose size() is known");
  Sampler sampler(*size);
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler),
                                                                 std::move(options));
}

template <class Dataset, SamplerType Sampler>
  requires(!Dataset::is_stateful)
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions options = {}) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler),
                                                                 std::move(options));
}

}  // namespace loom::data
