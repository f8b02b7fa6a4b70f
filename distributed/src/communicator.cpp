// Communicator and PluginWork (communicator.h).
#include "communicator.h"

#include <loom/error.h>
#include <loom/plugin.hpp>

#include <cstdlib>
#include <cstring>

namespace loom::distributed::detail {
namespace {

// The host Store behind comm_api.h's LoomCommStore. Store errors
// (loom::Error, naming the store's address) become LoomError values of the
// same kind.
template <class F>
LoomError* guarded(F&& f) noexcept {
  try {
    f();
    return nullptr;
  } catch (const loom::Error& e) {
    return plugin::make_error(static_cast<int32_t>(e.kind()), e.what());
  } catch (const std::exception& e) {
    return plugin::make_error(LOOM_STATUS_INTERNAL, e.what());
  } catch (...) {
    return plugin::make_error(LOOM_STATUS_INTERNAL, "unknown error in the rendezvous store");
  }
}

Store& store_of(void* host_data) { return *static_cast<Store*>(host_data); }

LoomError* bridge_set(void* host_data, const char* key, const void* data, size_t size) {
  return guarded([&] {
    const auto* p = static_cast<const uint8_t*>(data);
    store_of(host_data).set(key, std::vector<uint8_t>(p, p + size));
  });
}

LoomError* bridge_get(void* host_data, const char* key, void** out_data, size_t* out_size) {
  return guarded([&] {
    const std::vector<uint8_t> v = store_of(host_data).get(key);
    *out_size = v.size();
    *out_data = nullptr;
    if (!v.empty()) {
      *out_data = std::malloc(v.size());
      if (!*out_data) throw std::bad_alloc();
      std::memcpy(*out_data, v.data(), v.size());
    }
  });
}

void bridge_free(void*, void* data) { std::free(data); }

LoomError* bridge_wait(void* host_data, const char* const* keys, int32_t num_keys, int64_t timeout_ms) {
  return guarded([&] {
    Store& s = store_of(host_data);
    std::vector<std::string> k(keys, keys + num_keys);
    s.wait(k, timeout_ms < 0 ? s.timeout() : std::chrono::milliseconds(timeout_ms));
  });
}

}  // namespace

void throw_if_error(LoomError* e, const std::string& what) {
  if (e) loom::detail::throw_abi_error(e, what);
}

Communicator::Communicator(const LoomCommPluginInfo& plugin, std::shared_ptr<Store> store, int rank,
                           int world_size, std::chrono::milliseconds timeout, const std::string& local_address,
                           int device_index)
    : plugin_(plugin), store_(std::move(store)), timeout_(timeout) {
  bridge_.struct_size = sizeof bridge_;
  bridge_.host_data = store_.get();
  bridge_.set = &bridge_set;
  bridge_.get = &bridge_get;
  bridge_.free_value = &bridge_free;
  bridge_.wait = &bridge_wait;
  LoomCommConfig config{};
  config.struct_size = sizeof config;
  config.rank = rank;
  config.world_size = world_size;
  config.device_index = device_index;
  config.timeout_ms = timeout.count();
  config.store = &bridge_;
  config.local_address = local_address.empty() ? nullptr : local_address.c_str();
  throw_if_error(plugin_.comm_create(&config, &comm_),
                 std::string(plugin_.name) + " rendezvous of rank " + std::to_string(rank) + " of " +
                     std::to_string(world_size));
}

Communicator::~Communicator() {
  if (comm_) plugin_.comm_destroy(comm_);
}

PluginWork::PluginWork(std::shared_ptr<Communicator> comm, LoomCommWork* handle, std::string what,
                       std::function<void()> finish, std::vector<Tensor> keep_alive,
                       std::function<std::string()> diagnose)
    : comm_(std::move(comm)),
      handle_(handle),
      what_(std::move(what)),
      finish_(std::move(finish)),
      keep_alive_(std::move(keep_alive)),
      diagnose_(std::move(diagnose)) {}

PluginWork::~PluginWork() {
  // comm_api.h: a handle is released only once complete. A work nobody
  // waited for is waited for here (its error, if any, is dropped, as
  // PyTorch drops an unwaited work's).
  const auto& p = comm_->plugin();
  if (!waited_) {
    if (LoomError* e = p.work_wait(handle_, -1))
      if (e->destroy) e->destroy(e);
  }
  p.work_release(handle_);
}

void Communicator::abort() {
  if (aborted_.exchange(true) || !plugin_.comm_abort) return;  // once
  if (LoomError* e = plugin_.comm_abort(comm_))
    if (e->destroy) e->destroy(e);  // the collective's own error is what the caller sees
}

void PluginWork::wait() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!waited_) {
    waited_ = true;
    LoomError* e = comm_->plugin().work_wait(handle_, -1);
    if (e) {
      error_ = std::string(e->message ? e->message : "(no message)");
      error_code_ = e->code;
      if (e->destroy) e->destroy(e);
      // The flight recorder asks the other ranks about this collective; after
      // an earlier failure aborted the group there is nothing new to learn.
      if (comm_->aborted())
        error_ += " (the group was aborted after an earlier collective failed; make a new one)";
      else if (diagnose_)
        error_ += diagnose_();
      comm_->abort();
    } else if (finish_) {
      finish_();
    }
    finish_ = nullptr;
    keep_alive_.clear();
  }
  if (!error_.empty()) throw loom::Error(static_cast<loom::ErrorKind>(error_code_), what_ + " failed: " + error_);
}

bool PluginWork::is_completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (waited_) return true;
  int32_t done = 0;
  throw_if_error(comm_->plugin().work_test(handle_, &done), what_);
  return done != 0;
}

}  // namespace loom::distributed::detail
