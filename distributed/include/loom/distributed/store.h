// loom/distributed/store.h — the rendezvous key-value store of
// loom::distributed (PyTorch's c10d Store / TCPStore / FileStore /
// PrefixStore).
//
// The processes of a job meet through a store before any collective runs:
// rank 0 publishes what the others need (addresses, a communicator id), each
// rank counts itself in, and everyone waits for everyone:
//
//   using namespace std::chrono_literals;
//   // rank 0 (MASTER_ADDR=10.0.0.1, MASTER_PORT=29500) and every other rank:
//   loom::distributed::TCPStore store("10.0.0.1", 29500, /*is_server=*/rank == 0,
//                                     /*timeout=*/60s, /*world_size=*/world);
//   store.set("rank_" + std::to_string(rank), my_address_bytes);
//   auto peer = store.get("rank_0");            // blocks until rank 0 set it
//   store.add("ready", 1);                      // atomic counter
//
// Values are bytes. Counters made by add() hold the decimal ASCII text of
// their value (get() of a counter at 3 returns {'3'}), as in PyTorch.
// Keys starting "__loom" are reserved for the stores themselves.
//
// Errors: every failure throws loom::Error whose message names the store
// ("TCPStore:" / "FileStore:"), the key(s) and the address or file involved:
//   InvalidArgument — the caller's mistake (a non-positive timeout, add() on a
//                     key whose value is not an integer, a client given port 0);
//   NotFound        — something did not appear within its timeout: a key
//                     (get, wait) or the server (a client's connect);
//   Device          — the transport failed: cannot listen on the port, the
//                     server closed the connection or stopped answering, a
//                     file cannot be read or written.
// Nothing blocks longer than its timeout (plus, for TCPStore, a grace period
// of a few seconds when the server itself stops answering).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::distributed {

// PyTorch's default: long enough for every rank of a big job to start.
inline constexpr std::chrono::milliseconds kDefaultStoreTimeout{std::chrono::seconds(300)};

// A key-value store shared by the processes of a job. Every member is
// thread-safe: any number of threads may call any member of one store at
// once (a blocked get() does not hold up the other threads' calls).
// Destroying a store while another thread is inside one of its members is
// undefined behaviour, as for any object.
class Store {
 public:
  // Throws InvalidArgument unless timeout > 0.
  explicit Store(std::chrono::milliseconds timeout);
  virtual ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Sets `key` to `value`, replacing any earlier value, and wakes every
  // get()/wait() blocked on the key.
  virtual void set(const std::string& key, const std::vector<uint8_t>& value) = 0;

  // The value of `key`; blocks until the key exists. Throws NotFound naming
  // the key when it is still missing after timeout().
  virtual std::vector<uint8_t> get(const std::string& key) = 0;

  // Adds `delta` to the counter `key` atomically (a missing key counts as 0)
  // and returns the new value. Throws InvalidArgument when the key holds a
  // value that is not a decimal integer, or when the sum overflows int64.
  // add(key, 0) reads a counter without changing it.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;

  // True when every key exists (true for no keys); never blocks on the keys.
  virtual bool check(const std::vector<std::string>& keys) = 0;

  // Blocks until every key exists. Throws InvalidArgument unless timeout > 0,
  // and NotFound naming the keys still missing when `timeout` passes first.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;

  // Removes `key`; true when it existed.
  virtual bool delete_key(const std::string& key) = 0;

  // The timeout of get() and, for TCPStore, of connecting and of every
  // request. Set at construction; set_timeout throws InvalidArgument unless
  // timeout > 0 and affects calls that start afterwards.
  virtual std::chrono::milliseconds timeout() const;
  virtual void set_timeout(std::chrono::milliseconds timeout);

 private:
  std::atomic<int64_t> timeout_ms_;
};

namespace detail {
class TcpStoreServer;
struct TcpClientPool;
struct FileStoreState;
}  // namespace detail

// A store served over TCP by one process of the job (the server, usually
// rank 0) to every process (clients), the server process included.
//
// The server listens on host:port and serves any number of clients from one
// background thread with poll(); a get()/wait() on a missing key is parked
// on the server and answered the moment the key is set, so waiting clients
// send nothing while they wait. The wire format (loom's own, not PyTorch's)
// is length-prefixed binary frames over TCP, versioned by a handshake: a
// client that reaches something other than a loom TCPStore fails with an
// error saying so.
//
// A client opens one connection per concurrent call (kept for reuse), so
// threads never wait for each other's blocked get(). A connection that
// failed is dropped; the next call opens a new one (retrying until
// timeout()). Not fork-safe: a forked child must make its own TCPStore
// rather than use one inherited from its parent.
class TCPStore : public Store {
 public:
  // is_server: listen on host:port (host "" or "0.0.0.0": every interface;
  // port 0: a free port, see port()) with SO_REUSEADDR, start the server
  // thread, then connect to it as a client. Throws Device when the port
  // cannot be bound ("cannot listen on host:port: Address already in use").
  // Otherwise: connect to the server at host:port (an IPv4/IPv6 address or a
  // host name, resolved with getaddrinfo), retrying while the server is not
  // up yet; throws NotFound ("no server at host:port after ...") once
  // `timeout` passes, InvalidArgument for port 0 or an empty host.
  // world_size > 0: every store so constructed counts itself in (a counter
  // key), and the server's constructor returns only once world_size of them
  // (itself included) have; it throws NotFound saying how many joined when
  // `timeout` passes first. Every process must then pass the same
  // world_size. Clients never wait for the others. world_size <= 0: no
  // counting, no waiting.
  TCPStore(std::string host, uint16_t port, bool is_server,
           std::chrono::milliseconds timeout = kDefaultStoreTimeout, int world_size = -1);
  // Closes this store's connections, then (server) stops the server thread
  // and closes its sockets: clients still connected see their calls fail
  // with "closed the connection". Never throws.
  ~TCPStore() override;

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool delete_key(const std::string& key) override;

  // The host given to the constructor, and the port the server listens on
  // (the actual one when the server was asked for port 0).
  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }
  bool is_server() const { return server_ != nullptr; }

 private:
  std::vector<uint8_t> call(const std::vector<uint8_t>& request, std::chrono::milliseconds wait,
                            const std::string& what);
  void join(int world_size);

  std::string host_;
  uint16_t port_;
  std::string address_;  // "host:port", for messages
  std::unique_ptr<detail::TcpStoreServer> server_;  // declared before pool_:
  std::unique_ptr<detail::TcpClientPool> pool_;     // clients close first
};

// A view of another store whose keys all live under "<prefix>/": process
// groups and sub-groups share the job's store without colliding. Holds the
// underlying store (shared) for its lifetime. timeout() and set_timeout()
// are the underlying store's. Messages name the full (prefixed) key.
class PrefixStore : public Store {
 public:
  // Throws InvalidArgument when `store` is null.
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool delete_key(const std::string& key) override;
  std::chrono::milliseconds timeout() const override;
  void set_timeout(std::chrono::milliseconds timeout) override;

  const std::string& prefix() const { return prefix_; }
  const std::shared_ptr<Store>& underlying() const { return store_; }

 private:
  std::string prefixed(const std::string& key) const;

  std::string prefix_;
  std::shared_ptr<Store> store_;
};

// A store in a file (init_method file://path) shared by the processes of one
// machine, or of several through a shared file system whose flock() works
// across machines (NFSv4 does; Linux maps it to byte-range locks).
//
// The file is an append-only log of set/delete records; every call takes
// flock() on it (shared to read, exclusive to write) and reads the records
// appended since its last call. get() and wait() poll the file, sleeping
// 1 ms growing to 20 ms between looks, until the key appears or the timeout
// passes: cheap for rendezvous, not meant for a hot path.
//
// The file is created when missing and never removed or compacted: use a
// fresh path per job (a file left by an earlier job would still hold its
// keys) and delete it afterwards. A record is written with one write() under
// the exclusive lock; a partial record left by a writer that died mid-write
// is cut off by the next writer.
class FileStore : public Store {
 public:
  // Opens (creating) `path`; throws InvalidArgument when it cannot.
  explicit FileStore(std::string path, std::chrono::milliseconds timeout = kDefaultStoreTimeout);
  ~FileStore() override;

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool delete_key(const std::string& key) override;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<detail::FileStoreState> state_;  // the keys read so far, under a mutex
};

}  // namespace loom::distributed
