// loom/data/data_loader.h — batches of a Dataset, optionally shuffled, built
// ahead by background threads.
//
//   auto ds = std::make_shared<loom::data::TensorDataset>(images, labels);
//   loom::data::DataLoader loader(ds, loom::data::DataLoaderOptions().batch_size(32)
//                                         .shuffle(true).seed(0).workers(2));
//   for (int epoch = 0; epoch < 10; ++epoch)
//     for (const loom::data::Example& batch : loader) train(batch.data, batch.target);
//
// Each range-for over the loader is one epoch; with shuffle, epoch k's order
// is a permutation drawn from (seed, k), so runs repeat exactly and each
// epoch differs. With workers > 0, that many threads build batches ahead of
// the loop, at most workers * prefetch of them waiting; the batches and
// their order are the same as with workers = 0. Leaving the loop early (or
// destroying the loader) stops and joins the threads. A batch that fails to
// build rethrows in the loop as loom::Error naming the batch index.
#pragma once

#include <loom/data/dataset.h>
#include <loom/options.h>

#include <cstdint>
#include <iterator>
#include <memory>

namespace loom::data {

struct DataLoaderOptions {
  LOOM_ARG(size_t, batch_size) = 1;
  LOOM_ARG(bool, shuffle) = false;
  LOOM_ARG(uint64_t, seed) = 0;
  LOOM_ARG(bool, drop_last) = false;  // skip a last, incomplete batch
  LOOM_ARG(size_t, workers) = 0;      // 0: batches are built in the loop's thread
  LOOM_ARG(size_t, prefetch) = 2;     // batches each worker may build ahead
};

namespace detail {
class EpochRun;  // one epoch's order, workers and ready batches
}

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> dataset, const DataLoaderOptions& options = {});
  // Takes a copy of `dataset` (cheap for TensorDataset: tensors are handles).
  template <class D, class = std::enable_if_t<std::is_base_of_v<Dataset, D>>>
  DataLoader(const D& dataset, const DataLoaderOptions& options = {})
      : DataLoader(std::make_shared<const D>(dataset), options) {}

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Example;
    using difference_type = std::ptrdiff_t;
    using pointer = const Example*;
    using reference = const Example&;

    Iterator() = default;
    const Example& operator*() const { return current_; }
    const Example* operator->() const { return &current_; }
    Iterator& operator++();
    bool operator==(const Iterator& other) const { return done() == other.done(); }
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    friend class DataLoader;
    explicit Iterator(std::shared_ptr<detail::EpochRun> run);
    bool done() const { return !run_; }
    std::shared_ptr<detail::EpochRun> run_;  // shared by copies; the last one stops the workers
    Example current_;
  };

  // Starts the next epoch.
  Iterator begin();
  Iterator end() { return Iterator(); }
  // Batches per epoch.
  size_t size() const;
  const DataLoaderOptions& options() const { return options_; }
  // Epochs started so far.
  uint64_t epoch() const { return epoch_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  uint64_t epoch_ = 0;
};

}  // namespace loom::data
