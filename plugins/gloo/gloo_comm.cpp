// Comm and Work (gloo_comm.hpp).
#include "gloo_comm.hpp"

#include "loop_thread.hpp"
#include "shm_group.hpp"

#include <loom/plugin.hpp>

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace loom::gloo_plugin {
namespace {

// The host's store (comm_api.h's LoomCommStore) as gloo's Store. gloo
// calls it only inside connectFullMesh, on the thread of comm_create.
class HostStore : public gloo::rendezvous::Store {
 public:
  HostStore(const LoomCommStore& s, int64_t timeout_ms) : s_(s), timeout_ms_(timeout_ms) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    check(s_.set(s_.host_data, key.c_str(), data.data(), data.size()));
  }
  std::vector<char> get(const std::string& key) override {
    void* data = nullptr;
    size_t size = 0;
    check(s_.get(s_.host_data, key.c_str(), &data, &size));
    std::vector<char> out(static_cast<const char*>(data), static_cast<const char*>(data) + size);
    if (data) s_.free_value(s_.host_data, data);
    return out;
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, std::chrono::milliseconds(timeout_ms_)); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    std::vector<const char*> k;
    for (const std::string& key : keys) k.push_back(key.c_str());
    check(s_.wait(s_.host_data, k.data(), static_cast<int32_t>(k.size()), timeout.count()));
  }

 private:
  static void check(LoomError* e) { plugin::throw_if_error(e); }
  LoomCommStore s_;
  int64_t timeout_ms_;
};

}  // namespace

Work::~Work() {
  if (waiter_.joinable()) waiter_.join();
}

void Work::finish(int32_t code, std::string error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    code_ = code;
    error_ = std::move(error);
  }
  cv_.notify_all();
}

bool Work::wait(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (timeout_ms < 0) {
    cv_.wait(lock, [&] { return done_; });
    return true;
  }
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return done_; });
}

bool Work::done() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

LoomError* Work::result() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_.empty() ? nullptr : plugin::make_error(code_, error_);
}

Comm::Comm(const LoomCommConfig& config)
    : rank_(config.rank),
      size_(config.world_size),
      timeout_ms_(config.timeout_ms),
      timeout_(timeout_ms_ > 0 ? timeout_ms_ : 1800000) {
  if (!config.store) throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, "gloo: comm_create without a store");
  if (size_ < 1 || rank_ < 0 || rank_ >= size_)
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, "gloo: rank " + std::to_string(rank_) +
                                                            " is not in a world of size " + std::to_string(size_));
  gloo::transport::tcp::attr attr;
  attr.hostname = config.local_address && *config.local_address ? config.local_address : "127.0.0.1";
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR,
                          "gloo: cannot open a TCP device on " + attr.hostname + ": " + e.what());
  }
  // LOOM_GLOO_LOOP_SCHED=other keeps gloo's default (for measuring the
  // difference: bench/dist_allreduce.py --variants).
  const char* loop_sched = std::getenv("LOOM_GLOO_LOOP_SCHED");
  if (!loop_sched || std::strcmp(loop_sched, "other") != 0) {
    const std::string why = batch_schedule_loop_thread(*device);
    if (!why.empty())
      std::fprintf(stderr, "loom gloo: rank %d: could not put the TCP loop thread under SCHED_BATCH (%s); "
                   "small collectives may stall for a scheduler time slice\n", rank_, why.c_str());
  }
  context_ = std::make_shared<gloo::rendezvous::Context>(rank_, size_);
  context_->setTimeout(timeout_);
  HostStore store(*config.store, timeout_ms_);
  // The store's own failures (plugin::Failure) name its address; gloo's
  // say only what it was doing.
  auto rendezvous = [&](const char* step, const std::function<void()>& run) {
    try {
      run();
    } catch (const plugin::Failure&) {
      throw;
    } catch (const std::exception& e) {
      throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR, "gloo: rank " + std::to_string(rank_) + " of " +
                                                          std::to_string(size_) + " could not " + step + ": " +
                                                          e.what());
    }
  };
  rendezvous("connect to its peers", [&] { context_->connectFullMesh(store, device); });
  std::string no_shm;
  rendezvous("agree on same-host shared memory",
             [&] { shm_ = ShmGroup::create(store, rank_, size_, timeout_, &no_shm); });
  if (!no_shm.empty())
    std::fprintf(stderr, "loom gloo: rank %d: same-host shared memory unavailable (%s); collectives use TCP\n",
                 rank_, no_shm.c_str());
  worker_ = std::thread([this] { worker_loop(); });
}

Comm::~Comm() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::shared_ptr<Work> Comm::start(std::string what, std::function<void()> run) {
  std::lock_guard<std::mutex> lock(mutex_);
  return enqueue_locked(std::move(what), std::move(run));
}

void Comm::abort() {
  std::deque<Job> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    dropped.swap(queue_);
  }
  if (shm_) shm_->abort();  // a shared-memory wait in progress fails within 10 ms
  for (Job& j : dropped) j.work->finish(LOOM_STATUS_DEVICE_ERROR, "gloo " + j.what + ": the communicator was aborted");
}

// Queues a job for the worker; mutex_ held by the caller.
std::shared_ptr<Work> Comm::enqueue_locked(std::string what, std::function<void()> run) {
  auto work = std::make_shared<Work>();
  if (aborted_) {
    work->finish(LOOM_STATUS_DEVICE_ERROR, "gloo " + what + ": the communicator was aborted");
    return work;
  }
  queue_.push_back(Job{std::move(what), std::move(run), work});
  cv_.notify_all();
  return work;
}

std::shared_ptr<Work> Comm::run_now_if_idle(std::string what, std::function<void()> run) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || busy_ || !queue_.empty()) return enqueue_locked(std::move(what), std::move(run));
    busy_ = true;
  }
  auto work = std::make_shared<Work>();
  execute(what, run, *work);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_ = false;
  }
  cv_.notify_all();
  return work;
}

void Comm::execute(const std::string& what, const std::function<void()>& run, Work& work) {
  try {
    run();
    work.finish(0, "");
  } catch (const plugin::Failure& e) {
    work.finish(e.code(), "gloo " + what + ": " + e.what());
  } catch (const std::exception& e) {
    // gloo's IoException and timeouts: a peer closed its connection or
    // stopped answering.
    work.finish(LOOM_STATUS_DEVICE_ERROR, "gloo " + what + " failed on rank " + std::to_string(rank_) + ": " + e.what());
  }
}

void Comm::worker_loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || (!queue_.empty() && !busy_); });
      if (queue_.empty()) return;  // stopping, nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    execute(job.what, job.run, *job.work);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
    }
    cv_.notify_all();
  }
}

}  // namespace loom::gloo_plugin
