// Many threads on the stores at once ([concurrency]: also run under
// ThreadSanitizer by make test-tsan, from loom_distributed_thread_tests).
#include "test_util.h"

#include <atomic>
#include <memory>
#include <mutex>

using namespace loom_store_test;
using loom::distributed::FileStore;
using loom::distributed::Store;
using loom::distributed::TCPStore;

namespace {

// Collects the first failure of any thread (Catch's macros are not
// thread-safe).
struct Failures {
  std::mutex mu;
  std::string first;
  std::atomic<int> count{0};
  void add(const std::string& what) {
    if (count++ == 0) {
      std::lock_guard<std::mutex> lock(mu);
      first = what;
    }
  }
};

// "<prefix><a>/<b>" (built with append: GCC 12 warns falsely on "lit" + string&&).
std::string name(const char* prefix, int a, int b) {
  std::string s = prefix;
  s.append(std::to_string(a)).append("/").append(std::to_string(b));
  return s;
}

std::string value_of(int thread, int i) { return name("v", thread, i); }

}  // namespace

TEST_CASE("TCPStore: 16 threads set, get and add concurrently", "[tcpstore][concurrency]") {
  constexpr int kThreads = 16, kRounds = 40;
  TCPStore server("127.0.0.1", 0, true, 20s);
  Failures failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        // Half share the server's store object, half have their own client.
        std::unique_ptr<TCPStore> own;
        if (t % 2) own = std::make_unique<TCPStore>("127.0.0.1", server.port(), false, 20s);
        Store& store = own ? static_cast<Store&>(*own) : server;
        const int next = (t + 1) % kThreads;
        for (int i = 0; i < kRounds; ++i) {
          store.set(name("t", t, i), bytes(value_of(t, i)));
          // Often not set yet: the get parks on the server until it is.
          const auto got = text(store.get(name("t", next, i)));
          if (got != value_of(next, i)) failures.add(name("thread ", t, i) + " got " + got);
          store.add("total", 1);
          if (!store.check({name("t", t, i)}))
            failures.add(name("thread ", t, i) + ": its own key is missing");
        }
      } catch (const std::exception& e) {
        failures.add(e.what());
      }
    });
  for (auto& th : threads) th.join();
  INFO(failures.first);
  CHECK(failures.count == 0);
  CHECK(server.add("total", 0) == kThreads * kRounds);
}

TEST_CASE("FileStore: threads share a FileStore and the file", "[filestore][concurrency]") {
  constexpr int kThreads = 8, kAdds = 25;
  TempPath file;
  FileStore shared(file.path, 10s);
  Failures failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        std::unique_ptr<FileStore> own;
        if (t % 2) own = std::make_unique<FileStore>(file.path, 10s);
        Store& store = own ? static_cast<Store&>(*own) : shared;
        for (int i = 0; i < kAdds; ++i) store.add("total", 1);
        store.set("done/" + std::to_string(t), bytes("1"));
        std::vector<std::string> all;
        for (int k = 0; k < kThreads; ++k) all.push_back("done/" + std::to_string(k));
        store.wait(all, 10s);
        if (text(store.get("total")) != std::to_string(kThreads * kAdds))
          failures.add(name("thread ", t, 0) + " saw total " + text(store.get("total")));
      } catch (const std::exception& e) {
        failures.add(e.what());
      }
    });
  for (auto& th : threads) th.join();
  INFO(failures.first);
  CHECK(failures.count == 0);
}
