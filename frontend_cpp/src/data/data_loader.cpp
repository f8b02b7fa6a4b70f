// data_loader.cpp — DataLoader: the epoch's order, batch building, and the
// worker threads that build batches ahead of the loop.
#include <loom/autograd.h>
#include <loom/data/data_loader.h>
#include <loom/error.h>
#include <loom/ops.h>
#include <loom/ops/shape.h>

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

namespace loom::data {

namespace {

// The indices of an epoch: 0..n-1, shuffled from (seed, epoch) with a
// Fisher-Yates over mt19937_64 (both fully specified, so every platform and
// library gives the same order).
std::vector<int64_t> epoch_order(size_t n, bool shuffle, uint64_t seed, uint64_t epoch) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), int64_t{0});
  if (!shuffle) return order;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + epoch);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

Example build_batch(const Dataset& dataset, const std::vector<int64_t>& indices) {
  autograd::NoGradGuard no_grad;
  if (auto batch = dataset.get_batch(indices)) return std::move(*batch);
  std::vector<Tensor> data, target;
  for (int64_t i : indices) {
    Example e = dataset.get(static_cast<size_t>(i));
    data.push_back(std::move(e.data));
    if (e.target.defined()) target.push_back(std::move(e.target));
  }
  LOOM_CHECK(target.empty() || target.size() == data.size(),
             "data: some examples of the batch have a target and some do not");
  return {stack(data), target.empty() ? Tensor() : stack(target)};
}

}  // namespace

namespace detail {

class EpochRun {
 public:
  EpochRun(std::shared_ptr<const Dataset> dataset, std::vector<std::vector<int64_t>> batches, size_t workers,
           size_t prefetch)
      : dataset_(std::move(dataset)), batches_(std::move(batches)), capacity_(std::max<size_t>(1, workers * prefetch)) {
    for (size_t w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
  }

  ~EpochRun() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& t : threads_) t.join();
  }

  bool finished() const { return next_out_ >= batches_.size(); }

  // The next batch in order (built here when there are no workers).
  Example next() {
    const size_t b = next_out_++;
    if (threads_.empty()) return build(b);
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ready_.count(b) != 0; });
    Ready r = std::move(ready_.at(b));
    ready_.erase(b);
    consumed_ = b + 1;
    lock.unlock();
    changed_.notify_all();  // a slot is free
    if (r.error) std::rethrow_exception(r.error);
    return std::move(r.batch);
  }

 private:
  struct Ready {
    Example batch;
    std::exception_ptr error;
  };

  Example build(size_t b) {
    try {
      return build_batch(*dataset_, batches_[b]);
    } catch (const std::exception& e) {
      throw Error("data: DataLoader: building batch " + std::to_string(b) + " failed: " + e.what());
    } catch (...) {
      throw Error("data: DataLoader: building batch " + std::to_string(b) + " failed with a non-standard exception");
    }
  }

  void work() {
    for (;;) {
      size_t b;
      {
        std::unique_lock lock(mutex_);
        // Take the next batch once it is within `capacity_` of the consumer.
        changed_.wait(lock, [&] { return stop_ || next_in_ >= batches_.size() || next_in_ < consumed_ + capacity_; });
        if (stop_ || next_in_ >= batches_.size()) return;
        b = next_in_++;
      }
      Ready r;
      try {
        r.batch = build(b);
      } catch (...) {
        r.error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex_);
        ready_.emplace(b, std::move(r));
      }
      changed_.notify_all();
    }
  }

  std::shared_ptr<const Dataset> dataset_;
  std::vector<std::vector<int64_t>> batches_;
  size_t capacity_;
  size_t next_out_ = 0;  // the consumer's next batch (consumer thread only)

  std::mutex mutex_;
  std::condition_variable changed_;
  size_t next_in_ = 0;   // next batch a worker takes
  size_t consumed_ = 0;  // batches handed to the consumer
  bool stop_ = false;
  std::map<size_t, Ready> ready_;
  std::vector<std::thread> threads_;  // last: started after everything above exists
};

}  // namespace detail

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, const DataLoaderOptions& options)
    : dataset_(std::move(dataset)), options_(options) {
  LOOM_CHECK(dataset_, "data: DataLoader needs a dataset");
  LOOM_CHECK(options_.batch_size() > 0, "data: DataLoader: batch_size must be positive");
  LOOM_CHECK(options_.workers() == 0 || options_.prefetch() > 0,
             "data: DataLoader: prefetch must be positive when workers > 0");
}

size_t DataLoader::size() const {
  const size_t n = dataset_->size(), b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

DataLoader::Iterator DataLoader::begin() {
  const std::vector<int64_t> order = epoch_order(dataset_->size(), options_.shuffle(), options_.seed(), epoch_++);
  std::vector<std::vector<int64_t>> batches(size());
  for (size_t b = 0; b < batches.size(); ++b) {
    const size_t first = b * options_.batch_size();
    const size_t last = std::min(order.size(), first + options_.batch_size());
    batches[b].assign(order.begin() + static_cast<std::ptrdiff_t>(first),
                      order.begin() + static_cast<std::ptrdiff_t>(last));
  }
  if (batches.empty()) return Iterator();
  return Iterator(std::make_shared<detail::EpochRun>(dataset_, std::move(batches), options_.workers(),
                                                     options_.prefetch()));
}

DataLoader::Iterator::Iterator(std::shared_ptr<detail::EpochRun> run) : run_(std::move(run)) { ++*this; }

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  if (!run_ || run_->finished()) {
    run_.reset();  // stops the workers
    current_ = Example();
    return *this;
  }
  try {
    current_ = run_->next();
  } catch (...) {
    run_.reset();
    throw;
  }
  return *this;
}

}  // namespace loom::data
