// prefix_store.cpp — PrefixStore: another store's keys under "<prefix>/".
#include <loom/distributed/store.h>

#include <loom/error.h>

namespace loom::distributed {
namespace {

// The underlying store's timeout, read before it is known to be non-null.
std::chrono::milliseconds timeout_of(const std::shared_ptr<Store>& store, const std::string& prefix) {
  if (!store)
    throw Error(ErrorKind::InvalidArgument,
                loom::detail::cat("PrefixStore('", prefix, "'): the underlying store is null"));
  return store->timeout();
}

}  // namespace

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : Store(timeout_of(store, prefix)), prefix_(std::move(prefix)), store_(std::move(store)) {}

std::string PrefixStore::prefixed(const std::string& key) const { return prefix_ + "/" + key; }

void PrefixStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  store_->set(prefixed(key), value);
}

std::vector<uint8_t> PrefixStore::get(const std::string& key) { return store_->get(prefixed(key)); }

int64_t PrefixStore::add(const std::string& key, int64_t delta) {
  return store_->add(prefixed(key), delta);
}

bool PrefixStore::check(const std::vector<std::string>& keys) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(prefixed(k));
  return store_->check(full);
}

void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(prefixed(k));
  store_->wait(full, timeout);
}

bool PrefixStore::delete_key(const std::string& key) { return store_->delete_key(prefixed(key)); }

std::chrono::milliseconds PrefixStore::timeout() const { return store_->timeout(); }

void PrefixStore::set_timeout(std::chrono::milliseconds timeout) { store_->set_timeout(timeout); }

}  // namespace loom::distributed
