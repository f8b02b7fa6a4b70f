// sim_queue.cpp — per-stream queues of deferred copies and the pinned
// blocks they may touch (see sim_queue.hpp). One mutex guards everything and
// work runs under it: sim's work is a memcpy, and running it under the lock
// keeps each stream's order even when several threads drain at once.
#include "sim_queue.hpp"

#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <utility>

namespace sim {
namespace {

struct Queue {
  uint64_t next_ticket = 1;
  uint64_t ran = 0;  // every ticket up to this one has run
  std::deque<std::pair<uint64_t, std::function<void()>>> work;
};

using Key = std::pair<int32_t, void*>;

std::mutex queue_mutex;
std::map<Key, Queue>& queues() {
  static auto* q = new std::map<Key, Queue>;  // kernels may run during static destruction
  return *q;
}
std::map<uintptr_t, size_t>& pinned_blocks() {
  static auto* m = new std::map<uintptr_t, size_t>;
  return *m;
}

void run_until(Queue& q, uint64_t upto) {
  while (!q.work.empty() && q.work.front().first <= upto) {
    auto item = std::move(q.work.front());
    q.work.pop_front();
    item.second();
    q.ran = item.first;
  }
  if (q.work.empty()) q.ran = q.next_ticket - 1;
}

}  // namespace

uint64_t enqueue(int32_t index, void* stream, std::function<void()> work) {
  std::lock_guard lock(queue_mutex);
  Queue& q = queues()[{index, stream}];
  const uint64_t ticket = q.next_ticket++;
  q.work.emplace_back(ticket, std::move(work));
  return ticket;
}

void drain(int32_t index, void* stream, uint64_t upto) {
  std::lock_guard lock(queue_mutex);
  auto it = queues().find({index, stream});
  if (it != queues().end()) run_until(it->second, upto);
}

void drain_device(int32_t index) {
  std::lock_guard lock(queue_mutex);
  for (auto& [key, q] : queues())
    if (key.first == index) run_until(q, UINT64_MAX);
}

void drain_all() {
  std::lock_guard lock(queue_mutex);
  for (auto& [key, q] : queues()) run_until(q, UINT64_MAX);
}

uint64_t last_ticket(int32_t index, void* stream) {
  std::lock_guard lock(queue_mutex);
  auto it = queues().find({index, stream});
  return it == queues().end() ? 0 : it->second.next_ticket - 1;
}

bool has_run(int32_t index, void* stream, uint64_t ticket) {
  std::lock_guard lock(queue_mutex);
  auto it = queues().find({index, stream});
  return it == queues().end() || it->second.ran >= ticket;
}

void retire_stream(int32_t index, void* stream) {
  std::lock_guard lock(queue_mutex);
  auto it = queues().find({index, stream});
  if (it == queues().end()) return;
  run_until(it->second, UINT64_MAX);
  queues().erase(it);
}

void* pinned_allocate(size_t nbytes) {
  void* p = std::malloc(nbytes);
  if (!p) return nullptr;
  std::lock_guard lock(queue_mutex);
  pinned_blocks()[reinterpret_cast<uintptr_t>(p)] = nbytes;
  return p;
}

void pinned_free(void* ptr) {
  std::lock_guard lock(queue_mutex);
  for (auto& [key, q] : queues()) run_until(q, UINT64_MAX);
  if (pinned_blocks().erase(reinterpret_cast<uintptr_t>(ptr))) std::free(ptr);
}

bool is_pinned(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(queue_mutex);
  auto it = pinned_blocks().upper_bound(addr);
  if (it == pinned_blocks().begin()) return false;
  --it;
  return addr < it->first + it->second;
}

}  // namespace sim
