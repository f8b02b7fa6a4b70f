// The stores in one process, then across fork()ed processes: the calls,
// their error messages, and the failures a job meets (server late, missing,
// dead, port taken).
#include "test_util.h"

#include <memory>

using namespace loom_store_test;
using loom::ErrorKind;
using loom::distributed::FileStore;
using loom::distributed::PrefixStore;
using loom::distributed::Store;
using loom::distributed::TCPStore;
using Catch::Contains;

namespace {

std::string address(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// What every store must do, run against each kind.
void exercise(Store& store) {
  store.set("a", bytes("1"));
  CHECK(text(store.get("a")) == "1");
  store.set("a", bytes("two"));
  CHECK(text(store.get("a")) == "two");
  store.set("empty", {});
  CHECK(store.get("empty").empty());

  std::vector<uint8_t> big(3 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7);
  store.set("big", big);
  CHECK(store.get("big") == big);

  CHECK(store.add("n", 5) == 5);
  CHECK(store.add("n", -3) == 2);
  CHECK(store.add("n", 0) == 2);
  CHECK(text(store.get("n")) == "2");  // counters are decimal text
  const auto not_int = error_of([&] { store.add("a", 1); });
  CHECK(not_int.kind() == ErrorKind::InvalidArgument);
  CHECK_THAT(not_int.what(), Contains("'a'") && Contains("not a decimal integer"));
  store.set("max", bytes(std::to_string(INT64_MAX)));
  CHECK_THAT(error_of([&] { store.add("max", 1); }).what(), Contains("overflow"));

  CHECK(store.check({"a", "n"}));
  CHECK_FALSE(store.check({"a", "nope"}));
  CHECK(store.check({}));
  store.wait({"a", "n"}, 300ms);
  const auto t0 = Clock::now();
  const auto missing = error_of([&] { store.wait({"a", "x1", "x2"}, 300ms); });
  CHECK(ms_since(t0) >= 250);
  CHECK(missing.kind() == ErrorKind::NotFound);
  CHECK_THAT(missing.what(), Contains("keys 'x1', 'x2' not set within 300 ms"));
  CHECK(error_of([&] { store.wait({"a"}, 0ms); }).kind() == ErrorKind::InvalidArgument);

  CHECK(store.delete_key("a"));
  CHECK_FALSE(store.delete_key("a"));
  CHECK_FALSE(store.check({"a"}));

  const auto old = store.timeout();
  store.set_timeout(200ms);
  CHECK(store.timeout() == 200ms);
  CHECK_THAT(error_of([&] { store.get("a"); }).what(), Contains("key 'a' not set within 200 ms"));
  CHECK(error_of([&] { store.set_timeout(-1ms); }).kind() == ErrorKind::InvalidArgument);
  store.set_timeout(old);
}

}  // namespace

TEST_CASE("TCPStore: set, get, add, check, wait and delete in one process", "[tcpstore]") {
  TCPStore server("127.0.0.1", 0, /*is_server=*/true, 5s);
  REQUIRE(server.port() != 0);
  CHECK(server.is_server());
  exercise(server);

  TCPStore client("127.0.0.1", server.port(), false, 5s);
  CHECK_FALSE(client.is_server());
  CHECK(client.add("n", 1) == 3);  // the server's keys, seen by a client
  CHECK(client.delete_key("n"));
  exercise(client);
}

TEST_CASE("TCPStore: a blocked get is answered when another client sets the key", "[tcpstore]") {
  TCPStore server("127.0.0.1", 0, true, 5s);
  TCPStore client("localhost", server.port(), false, 5s);  // a host name, resolved
  std::vector<uint8_t> got;
  std::thread waiter([&] { got = client.get("late"); });
  std::this_thread::sleep_for(100ms);
  // The same store object serves another thread while one get is parked.
  client.set("other", bytes("x"));
  CHECK(text(server.get("other")) == "x");
  server.set("late", bytes("here"));
  waiter.join();
  CHECK(text(got) == "here");
}

TEST_CASE("TCPStore: get of a missing key times out naming the key and the address", "[tcpstore]") {
  TCPStore store("127.0.0.1", 0, true, 300ms);
  const auto t0 = Clock::now();
  const auto e = error_of([&] { store.get("rank_3"); });
  const auto took = ms_since(t0);
  CHECK(took >= 250);
  CHECK(took < 3000);
  CHECK(e.kind() == ErrorKind::NotFound);
  CHECK_THAT(e.what(), Contains("TCPStore: key 'rank_3' not set within 300 ms") &&
                           Contains("store at " + address(store.port())));
}

TEST_CASE("TCPStore: connecting where no server listens fails after the timeout naming the address",
          "[tcpstore]") {
  const uint16_t port = free_port();
  const auto t0 = Clock::now();
  const auto e = error_of([&] { TCPStore("127.0.0.1", port, false, 300ms); });
  const auto took = ms_since(t0);
  CHECK(took >= 250);
  CHECK(took < 3000);
  CHECK(e.kind() == ErrorKind::NotFound);
  CHECK_THAT(e.what(), Contains("TCPStore: no server at " + address(port) + " after 300 ms") &&
                           Contains("connection refused") && Contains("MASTER_ADDR/MASTER_PORT"));
}

TEST_CASE("TCPStore: a second server on a port in use fails naming the port", "[tcpstore]") {
  TCPStore first("127.0.0.1", 0, true, 5s);
  const auto e = error_of([&] { TCPStore("127.0.0.1", first.port(), true, 300ms); });
  CHECK(e.kind() == ErrorKind::Device);
  CHECK_THAT(e.what(), Contains("TCPStore: cannot listen on " + address(first.port())) &&
                           Contains("Address already in use") && Contains("MASTER_PORT"));
  first.set("still", bytes("serving"));
  CHECK(text(first.get("still")) == "serving");
}

TEST_CASE("TCPStore: arguments are checked", "[tcpstore]") {
  CHECK_THAT(error_of([] { TCPStore("127.0.0.1", 0, false, 1s); }).what(), Contains("port 0"));
  CHECK_THAT(error_of([] { TCPStore("", 29500, false, 1s); }).what(), Contains("empty"));
  CHECK(error_of([] { TCPStore("127.0.0.1", 0, true, 0ms); }).kind() == ErrorKind::InvalidArgument);
}

TEST_CASE("TCPStore: world_size names how many workers joined when some never come", "[tcpstore]") {
  const auto e = error_of([] { TCPStore("127.0.0.1", 0, true, 300ms, /*world_size=*/3); });
  CHECK(e.kind() == ErrorKind::NotFound);
  CHECK_THAT(e.what(), Contains("only 1 of 3 workers joined within 300 ms"));
  TCPStore alone("127.0.0.1", 0, true, 1s, /*world_size=*/1);  // itself: done at once
}

TEST_CASE("TCPStore: destroying the server fails a client's blocked get", "[tcpstore]") {
  auto server = std::make_unique<TCPStore>("127.0.0.1", 0, true, 5s);
  const uint16_t port = server->port();
  TCPStore client("127.0.0.1", port, false, 5s);
  std::string message;
  std::thread waiter([&] {
    try {
      client.get("never");
    } catch (const loom::Error& e) {
      message = e.what();
    }
  });
  std::this_thread::sleep_for(100ms);
  const auto t0 = Clock::now();
  server.reset();
  waiter.join();
  CHECK(ms_since(t0) < 2000);
  CHECK_THAT(message, Contains("the server at " + address(port) + " closed the connection"));
}

TEST_CASE("TCPStore: a server and three client processes: exact counts, then a barrier", "[tcpstore][process]") {
  constexpr int kWorld = 4, kAdds = 200;
  const uint16_t port = free_port();
  auto all_arrived = [] {
    std::vector<std::string> keys;
    for (int r = 0; r < kWorld; ++r) keys.push_back("arrived/" + std::to_string(r));
    return keys;
  };
  Children children;
  std::vector<pid_t> pids;
  for (int rank = 1; rank < kWorld; ++rank)
    pids.push_back(children.spawn([&, rank] {
      // The server does not exist yet: the client retries.
      TCPStore store("127.0.0.1", port, false, 8s, kWorld);
      for (int i = 0; i < kAdds; ++i) store.add("counter", 1);
      store.set("arrived/" + std::to_string(rank), bytes("1"));
      store.wait(all_arrived(), 8s);
      // Past the barrier every add of every rank is in.
      CHILD_CHECK(text(store.get("counter")) == std::to_string(kWorld * kAdds));
      return 0;
    }));
  // Returns only once all four have joined.
  TCPStore server("127.0.0.1", port, true, 8s, kWorld);
  CHECK(server.add("__loom_tcpstore/workers", 0) == kWorld);
  for (int i = 0; i < kAdds; ++i) server.add("counter", 1);
  server.set("arrived/0", bytes("1"));
  server.wait(all_arrived(), 8s);
  CHECK(text(server.get("counter")) == std::to_string(kWorld * kAdds));
  for (pid_t pid : pids) CHECK(children.succeeded(pid));
}

TEST_CASE("TCPStore: a client started before the server connects by retrying", "[tcpstore][process]") {
  const uint16_t port = free_port();
  Children children;
  const pid_t pid = children.spawn([&] {
    TCPStore store("127.0.0.1", port, false, 5s);
    store.set("hello", bytes("from client"));
    CHILD_CHECK(text(store.get("reply")) == "from server");
    return 0;
  });
  std::this_thread::sleep_for(300ms);
  TCPStore server("127.0.0.1", port, true, 5s);
  CHECK(text(server.get("hello")) == "from client");
  server.set("reply", bytes("from server"));
  CHECK(children.succeeded(pid));
}

TEST_CASE("TCPStore: the server process dying fails a blocked get instead of hanging",
          "[tcpstore][process]") {
  const uint16_t port = free_port();
  Children children;
  const pid_t pid = children.spawn([&] {
    TCPStore server("127.0.0.1", port, true, 5s);
    server.get("client_ready");
    std::this_thread::sleep_for(200ms);  // the client is parked in get by now
    ::raise(SIGKILL);
    return 1;
  });
  TCPStore client("127.0.0.1", port, false, 5s);
  client.set("client_ready", bytes("1"));
  const auto t0 = Clock::now();
  const auto e = error_of([&] { client.get("never_set"); });
  CHECK(ms_since(t0) < 4000);
  CHECK(e.kind() == ErrorKind::Device);
  CHECK_THAT(e.what(), Contains("TCPStore: the server at " + address(port) + " closed the connection") &&
                           Contains("get('never_set')"));
  const int status = children.wait(pid);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
}

TEST_CASE("FileStore: set, get, add, check, wait and delete", "[filestore]") {
  TempPath file;
  FileStore store(file.path, 5s);
  exercise(store);
  // A second store on the file sees the same keys; a timeout names the file.
  FileStore other(file.path, 300ms);
  CHECK(text(other.get("n")) == "2");
  CHECK(other.add("n", 1) == 3);
  CHECK(store.add("n", 0) == 3);
  const auto e = error_of([&] { other.get("rank_3"); });
  CHECK(e.kind() == ErrorKind::NotFound);
  CHECK_THAT(e.what(), Contains("FileStore: key 'rank_3' not set within 300 ms") && Contains(file.path));
  CHECK_THAT(error_of([] { FileStore("/nonexistent_dir_loom/x", 1s); }).what(),
             Contains("cannot open '/nonexistent_dir_loom/x'"));
}

TEST_CASE("FileStore: shared between forked processes", "[filestore][process]") {
  constexpr int kWorld = 4, kAdds = 50;
  TempPath file;
  auto all_arrived = [] {
    std::vector<std::string> keys;
    for (int r = 0; r < kWorld; ++r) keys.push_back("arrived/" + std::to_string(r));
    return keys;
  };
  auto body = [&](int rank) {
    FileStore store(file.path, 8s);
    for (int i = 0; i < kAdds; ++i) store.add("counter", 1);
    store.set("arrived/" + std::to_string(rank), bytes(std::to_string(rank)));
    store.wait(all_arrived(), 8s);
    return text(store.get("counter"));
  };
  Children children;
  std::vector<pid_t> pids;
  for (int rank = 1; rank < kWorld; ++rank)
    pids.push_back(children.spawn([&, rank] {
      CHILD_CHECK(body(rank) == std::to_string(kWorld * kAdds));
      return 0;
    }));
  CHECK(body(0) == std::to_string(kWorld * kAdds));
  for (pid_t pid : pids) CHECK(children.succeeded(pid));
}

TEST_CASE("PrefixStore: keys of different prefixes don't collide", "[prefixstore]") {
  auto base = std::make_shared<TCPStore>("127.0.0.1", 0, true, 5s);
  PrefixStore a("pg0", base), b("pg1", base);
  a.set("x", bytes("a"));
  b.set("x", bytes("b"));
  CHECK(text(a.get("x")) == "a");
  CHECK(text(b.get("x")) == "b");
  CHECK(text(base->get("pg0/x")) == "a");
  CHECK(a.add("n", 2) == 2);
  CHECK(b.add("n", 5) == 5);
  CHECK_FALSE(b.check({"only_a"}));
  a.set("only_a", {});
  CHECK(a.check({"x", "only_a"}));
  CHECK_FALSE(b.check({"x", "only_a"}));
  CHECK(a.delete_key("x"));
  CHECK(b.check({"x"}));
  const auto e = error_of([&] { b.wait({"only_a"}, 300ms); });
  CHECK_THAT(e.what(), Contains("'pg1/only_a'"));

  // Sub-groups nest; the timeout is the underlying store's.
  auto sub = std::make_shared<PrefixStore>("pg0", base);
  PrefixStore nested("sub", sub);
  nested.set("k", bytes("v"));
  CHECK(text(base->get("pg0/sub/k")) == "v");
  nested.set_timeout(1234ms);
  CHECK(base->timeout() == 1234ms);
  CHECK(error_of([] { PrefixStore("p", nullptr); }).kind() == ErrorKind::InvalidArgument);

  TempPath file;
  auto fs = std::make_shared<FileStore>(file.path, 5s);
  PrefixStore fa("a", fs), fb("b", fs);
  fa.set("k", bytes("1"));
  CHECK_FALSE(fb.check({"k"}));
  CHECK(text(fs->get("a/k")) == "1");
}
