// data_loader.cpp — the DataLoader's epoch: the sampler's batches, and the
// worker threads that build them ahead of the loop (detail::EpochRun).
#include <loom/data/data_loader.h>
#include <loom/error.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace loom::data::detail {

void check_options(const DataLoaderOptions& options) {
  LOOM_CHECK(options.batch_size() > 0, "data: DataLoader: batch_size must be positive");
  LOOM_CHECK(options.workers() == 0 || options.max_jobs() || options.prefetch() > 0,
             "data: DataLoader: prefetch must be positive when workers > 0");
  LOOM_CHECK(options.max_jobs().value_or(1) > 0, "data: DataLoader: max_jobs must be positive");
}

std::vector<std::vector<size_t>> epoch_batches(samplers::Sampler& sampler, size_t dataset_size,
                                               const DataLoaderOptions& options) {
  sampler.reset(dataset_size);
  std::vector<std::vector<size_t>> batches;
  while (auto indices = sampler.next(options.batch_size())) {
    if (indices->empty()) break;
    if (options.drop_last() && indices->size() < options.batch_size()) break;
    batches.push_back(std::move(*indices));
  }
  return batches;
}

struct EpochRun::State {
  struct Ready {
    std::any batch;
    std::exception_ptr error;
  };

  State(Build build, std::vector<std::vector<size_t>> batches, const DataLoaderOptions& options)
      : build_fn(std::move(build)),
        batches(std::move(batches)),
        capacity(std::max<size_t>(1, options.max_jobs().value_or(options.workers() * options.prefetch()))),
        timeout(options.timeout()) {
    for (size_t w = 0; w < options.workers(); ++w) threads.emplace_back([this] { work(); });
  }

  ~State() {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    changed.notify_all();
    for (auto& t : threads) t.join();
  }

  std::any build(size_t b) {
    try {
      return build_fn(batches[b]);
    } catch (const std::exception& e) {
      throw Error("data: DataLoader: building batch " + std::to_string(b) + " failed: " + e.what());
    } catch (...) {
      throw Error("data: DataLoader: building batch " + std::to_string(b) + " failed with a non-standard exception");
    }
  }

  std::any next() {
    const size_t b = next_out++;
    if (threads.empty()) return build(b);
    std::unique_lock lock(mutex);
    auto has_batch = [&] { return ready.count(b) != 0; };
    if (timeout) {
      LOOM_CHECK(changed.wait_for(lock, *timeout, has_batch), "data: DataLoader: batch ", b, " was not ready within the ",
                 timeout->count(), " ms timeout");
    } else {
      changed.wait(lock, has_batch);
    }
    Ready r = std::move(ready.at(b));
    ready.erase(b);
    consumed = b + 1;
    lock.unlock();
    changed.notify_all();  // a slot is free
    if (r.error) std::rethrow_exception(r.error);
    return std::move(r.batch);
  }

  void work() {
    for (;;) {
      size_t b;
      {
        std::unique_lock lock(mutex);
        // Take the next batch once it is within `capacity` of the consumer.
        changed.wait(lock, [&] { return stop || next_in >= batches.size() || next_in < consumed + capacity; });
        if (stop || next_in >= batches.size()) return;
        b = next_in++;
      }
      Ready r;
      try {
        r.batch = build(b);
      } catch (...) {
        r.error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex);
        ready.emplace(b, std::move(r));
      }
      changed.notify_all();
    }
  }

  Build build_fn;
  std::vector<std::vector<size_t>> batches;
  size_t capacity;
  std::optional<std::chrono::milliseconds> timeout;
  size_t next_out = 0;  // the consumer's next batch (consumer thread only)

  std::mutex mutex;
  std::condition_variable changed;
  size_t next_in = 0;   // next batch a worker takes
  size_t consumed = 0;  // batches handed to the consumer
  bool stop = false;
  std::map<size_t, Ready> ready;
  std::vector<std::thread> threads;  // last: started after everything above exists
};

EpochRun::EpochRun(Build build, std::vector<std::vector<size_t>> batches, const DataLoaderOptions& options)
    : state_(std::make_unique<State>(std::move(build), std::move(batches), options)) {}
EpochRun::~EpochRun() = default;
bool EpochRun::finished() const { return state_->next_out >= state_->batches.size(); }
std::any EpochRun::next() { return state_->next(); }

}  // namespace loom::data::detail
