// The nccl communication plugin from the host's side: its table, the
// registry's account of it, and init_process_group("nccl"). Runs on every
// machine that builds the plugin: without a GPU the plugin must load, say
// "no GPU" as its state, and make init_process_group fail with that reason
// (never crash); with one, a world of one process all_reduces on cuda:0.
// The collectives on a GPU are bench/gpu_session/nccl_check.cpp's.
//
// The [stub] cases run the plugin's own logic (rendezvous, non-blocking
// polling, events, timeouts, aborts, its messages) on every machine: its
// sources built against a stub CUDA runtime and NCCL in host memory
// (plugins/nccl/tests), backend "nccl_stub" for cpu tensors, one rank, with
// the faults of a lost peer on demand (LOOM_NCCL_STUB_FAULT).
#include <loom/comm_api.h>
#include <loom/distributed/distributed.h>
#include <loom/error.h>
#include <loom/loom.h>
#include <loom/registry.h>

#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace dist = loom::distributed;
using Catch::Matchers::Contains;

namespace {

// The plugin's own table, from the library its manifest names (the
// registry hands out only the tables of usable plugins).
const LoomCommPluginInfo& nccl_table() {
  static const LoomCommPluginInfo* info = [] {
    loom::registry::PluginRecord rec;
    REQUIRE(loom::registry::Registry::global().find("nccl", rec));
    void* lib = dlopen(rec.library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    INFO("dlopen " << rec.library_path << ": " << (lib ? "ok" : dlerror()));
    REQUIRE(lib);
    auto entry = reinterpret_cast<LoomCommPluginEntryFn>(dlsym(lib, LOOM_COMM_PLUGIN_ENTRY_SYMBOL));
    REQUIRE(entry);
    return entry();
  }();
  return *info;
}

// The probe's verdict: "" when the plugin can run here, else its reason.
std::string probe_reason() {
  const LoomCommPluginInfo& p = nccl_table();
  LoomError* e = p.probe();
  if (!e) return "";
  std::string why = e->message ? e->message : "";
  e->destroy(e);
  return why;
}

std::string temp_store_path() {
  return (std::filesystem::temp_directory_path() / ("loom_nccl_test_" + std::to_string(::getpid()))).string();
}

}  // namespace

TEST_CASE("nccl plugin: the table describes collectives on cuda tensors", "[nccl]") {
  const LoomCommPluginInfo& p = nccl_table();
  CHECK(p.abi_major == LOOM_COMM_ABI_MAJOR);
  CHECK(std::string(p.name) == "nccl");
  CHECK(std::string(p.device_type) == "cuda");
  // Every dtype NCCL has; int16 it lacks, so the host refuses it by name.
  for (int32_t d : {LOOM_DTYPE_BOOL, LOOM_DTYPE_UINT8, LOOM_DTYPE_INT8, LOOM_DTYPE_INT32, LOOM_DTYPE_INT64,
                    LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64})
    CHECK((p.dtypes & LOOM_DTYPE_BIT(d)) != 0);
  CHECK((p.dtypes & LOOM_DTYPE_BIT(LOOM_DTYPE_INT16)) == 0);
  // Optional slots it fills: the probe, and the abort that ends a
  // collective stuck on a lost peer.
  CHECK(p.probe != nullptr);
  CHECK(p.comm_abort != nullptr);
}

TEST_CASE("nccl plugin: the registry lists it, with 'no GPU' as its state on a machine without one", "[nccl]") {
  auto& registry = loom::registry::Registry::global();
  std::string why;
  const LoomCommPluginInfo* usable = registry.load_comm_backend("nccl", why);
  loom::registry::PluginRecord rec;
  REQUIRE(registry.find("nccl", rec));
  CHECK(rec.comm_backends == std::vector<std::string>{"nccl"});
  CHECK(rec.comm_device_type == "cuda");
  const std::string reason = probe_reason();
  if (!reason.empty()) {
    CHECK_THAT(reason, Contains("no GPU"));
    CHECK(usable == nullptr);
    CHECK(rec.state == loom::registry::PluginState::NoDevices);
    CHECK_THAT(rec.reason, Contains("no GPU"));
    CHECK_THAT(why, Contains("nccl") && Contains("no GPU"));
  } else {
    CHECK(usable != nullptr);
    CHECK(rec.state == loom::registry::PluginState::Loaded);
  }
}

TEST_CASE("nccl plugin: init_process_group(\"nccl\") without a GPU fails naming the backend and the reason", "[nccl]") {
  if (!probe_reason().empty()) {
    dist::InitOptions o;
    o.init_method = "file://" + temp_store_path();
    o.world_size = 1;
    o.rank = 0;
    o.timeout = std::chrono::seconds(10);
    try {
      dist::init_process_group("nccl", o);
      FAIL("init_process_group(\"nccl\") succeeded on a machine whose nccl plugin says: " << probe_reason());
    } catch (const loom::Error& e) {
      CHECK_THAT(std::string(e.what()), Contains("nccl") && Contains("no GPU"));
    }
    CHECK_FALSE(dist::is_initialized());
    std::filesystem::remove(temp_store_path());
    return;
  }
  // A GPU: a world of one process on cuda:0.
  dist::InitOptions o;
  o.init_method = "file://" + temp_store_path();
  o.world_size = 1;
  o.rank = 0;
  dist::init_process_group("nccl", o);
  loom::Tensor t = loom::arange(8, loom::DType::Float32).to(loom::Device("cuda"));
  dist::all_reduce(t);
  CHECK(t.cpu().to_vector<float>() == loom::arange(8, loom::DType::Float32).to_vector<float>());
  dist::destroy_process_group();
  std::filesystem::remove(temp_store_path());
}

#if defined(LOOM_NCCL_STUB_TESTS)
namespace {

using Clock = std::chrono::steady_clock;

// LOOM_NCCL_STUB_FAULT for a scope.
struct Fault {
  explicit Fault(const char* what) { ::setenv("LOOM_NCCL_STUB_FAULT", what, 1); }
  ~Fault() { ::unsetenv("LOOM_NCCL_STUB_FAULT"); }
};

// A world of one process on the stub plugin.
void init_stub(std::chrono::milliseconds timeout) {
  std::filesystem::remove(temp_store_path());
  dist::InitOptions o;
  o.init_method = "file://" + temp_store_path();
  o.world_size = 1;
  o.rank = 0;
  o.timeout = timeout;
  dist::init_process_group("nccl_stub", o);
}

// Every event and communicator the plugin made is destroyed.
void check_nothing_leaked() {
  void* lib = dlopen("libloom_nccl_stub_runtime.so", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(lib);
  auto counts = reinterpret_cast<void (*)(int*, int*)>(dlsym(lib, "loom_nccl_stub_counts"));
  REQUIRE(counts);
  int events = -1, comms = -1;
  counts(&events, &comms);
  CHECK(events == 0);
  CHECK(comms == 0);
  dlclose(lib);
}

bool same(const loom::Tensor& a, const loom::Tensor& b) {
  return a.sizes() == b.sizes() && a.dtype() == b.dtype() &&
         a.to(loom::DType::Float64).contiguous().to_vector<double>() ==
             b.to(loom::DType::Float64).contiguous().to_vector<double>();
}

}  // namespace

TEST_CASE("nccl plugin (stub runtime): every collective at world size 1", "[nccl][stub]") {
  init_stub(std::chrono::seconds(10));
  using loom::DType;
  for (DType dt : {DType::Float32, DType::Int64, DType::Float16, DType::Bool}) {
    INFO(loom::name(dt));
    const loom::Tensor x = loom::arange(6, DType::Float32).reshape({2, 3}).to(dt);
    for (dist::ReduceOp op : {dist::ReduceOp::Sum, dist::ReduceOp::Product, dist::ReduceOp::Min, dist::ReduceOp::Max}) {
      loom::Tensor t = x.clone();
      dist::all_reduce(t, op);
      CHECK(same(t, x));
    }
    loom::Tensor t = x.clone();
    dist::broadcast(t, 0);
    CHECK(same(t, x));
    t = x.clone();
    dist::reduce(t, 0);
    CHECK(same(t, x));
    loom::Tensor out = loom::zeros({6}, dt);
    dist::all_gather_into_tensor(out, x.reshape({6}));
    CHECK(same(out, x.reshape({6})));
    out = loom::zeros({6}, dt);
    dist::reduce_scatter_tensor(out, x.reshape({6}));
    CHECK(same(out, x.reshape({6})));
    out = loom::zeros({6}, dt);
    dist::all_to_all_single(out, x.reshape({6}));
    CHECK(same(out, x.reshape({6})));
    std::vector<loom::Tensor> list = {loom::zeros({2, 3}, dt)};
    dist::gather(x, &list, 0);
    CHECK(same(list[0], x));
    out = loom::zeros({2, 3}, dt);
    std::vector<loom::Tensor> parts = {x};
    dist::scatter(out, &parts, 0);
    CHECK(same(out, x));
  }
  loom::Tensor empty = loom::zeros({0});
  dist::all_reduce(empty);
  dist::barrier();
  {  // works hold the communicator: released before destroy_process_group
    std::vector<loom::Tensor> ts = {loom::ones({4}), loom::full({4}, 2.0)};
    auto w0 = dist::all_reduce(ts[0], dist::ReduceOp::Sum, nullptr, true);
    auto w1 = dist::all_reduce(ts[1], dist::ReduceOp::Avg, nullptr, true);
    w1->wait();
    w0->wait();
    CHECK(w0->is_completed());
    CHECK(same(ts[1], loom::full({4}, 2.0)));
  }
  loom::Tensor i16 = loom::zeros({4}, loom::DType::Int16);
  CHECK_THROWS_WITH(dist::all_reduce(i16), Contains("nccl_stub") && Contains("int16"));
  dist::destroy_process_group();
  check_nothing_leaked();
}

TEST_CASE("nccl plugin (stub runtime): a collective that never completes fails after the timeout and aborts",
          "[nccl][stub]") {
  init_stub(std::chrono::milliseconds(300));
  loom::Tensor t = loom::ones({8});
  {
    Fault hang("hang");
    const auto t0 = Clock::now();
    try {
      dist::all_reduce(t);
      FAIL("an all_reduce that never completes returned");
    } catch (const loom::Error& e) {
      CHECK_THAT(std::string(e.what()),
                 Contains("all_reduce") && Contains("sequence 1") && Contains("300 ms") && Contains("aborted"));
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    CHECK(s >= 0.3);
    CHECK(s < 8.0);  // the timeout, the flight recorder's look at the store, no hang
  }
  // The aborted communicator refuses what comes next, at once.
  const auto t0 = Clock::now();
  CHECK_THROWS_WITH(dist::all_reduce(t), Contains("aborted earlier"));
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 2.0);
  dist::destroy_process_group();
  check_nothing_leaked();
}

TEST_CASE("nccl plugin (stub runtime): an asynchronous NCCL error (a lost peer) fails the collective at once",
          "[nccl][stub]") {
  init_stub(std::chrono::seconds(30));
  loom::Tensor t = loom::ones({8});
  {
    Fault lost("async_error");
    const auto t0 = Clock::now();
    try {
      dist::broadcast(t, 0);
      FAIL("a broadcast whose peer is lost returned");
    } catch (const loom::Error& e) {
      CHECK_THAT(std::string(e.what()), Contains("broadcast") && Contains("remote process exited") &&
                                            Contains("rank 1 was closed") && Contains("aborted"));
    }
    CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 8.0);  // not the 30 s timeout
  }
  dist::destroy_process_group();
  check_nothing_leaked();
}

TEST_CASE("nccl plugin (stub runtime): a communicator that never becomes ready fails init_process_group",
          "[nccl][stub]") {
  Fault hang("init_hang");
  try {
    init_stub(std::chrono::milliseconds(300));
    FAIL("init_process_group returned without a ready communicator");
  } catch (const loom::Error& e) {
    CHECK_THAT(std::string(e.what()), Contains("could not create its communicator") && Contains("300 ms"));
  }
  CHECK_FALSE(dist::is_initialized());
  check_nothing_leaked();
  std::filesystem::remove(temp_store_path());
}

namespace {

// comm_api.h's store for a world of one, in memory.
struct MemoryStore {
  std::map<std::string, std::string> values;
  LoomCommStore abi{};
  MemoryStore() {
    abi.struct_size = sizeof abi;
    abi.host_data = this;
    abi.set = [](void* self, const char* key, const void* data, size_t size) -> LoomError* {
      static_cast<MemoryStore*>(self)->values[key] = std::string(static_cast<const char*>(data), size);
      return nullptr;
    };
    abi.get = [](void* self, const char* key, void** out, size_t* size) -> LoomError* {
      const std::string& v = static_cast<MemoryStore*>(self)->values.at(key);
      *size = v.size();
      *out = std::malloc(v.size());
      std::memcpy(*out, v.data(), v.size());
      return nullptr;
    };
    abi.free_value = [](void*, void* data) { std::free(data); };
    abi.wait = [](void*, const char* const*, int32_t, int64_t) -> LoomError* { return nullptr; };
  }
};

}  // namespace

TEST_CASE("nccl plugin (stub runtime): comm_abort from another thread ends a wait on a stuck collective",
          "[nccl][stub]") {
  std::string why;
  const LoomCommPluginInfo* p = loom::registry::Registry::global().load_comm_backend("nccl_stub", why);
  INFO(why);
  REQUIRE(p);
  MemoryStore store;
  LoomCommConfig config{};
  config.struct_size = sizeof config;
  config.world_size = 1;
  config.timeout_ms = 60000;
  config.store = &store.abi;
  LoomComm* comm = nullptr;
  REQUIRE(p->comm_create(&config, &comm) == nullptr);
  std::vector<float> data(16, 1.0f);
  const int64_t shape[1] = {16}, strides[1] = {1};
  LoomTensorDesc d{};
  d.struct_size = sizeof d;
  d.data = data.data();
  d.ndim = 1;
  d.dtype = LOOM_DTYPE_FLOAT32;
  d.shape = shape;
  d.strides = strides;
  LoomCollective c{};
  c.struct_size = sizeof c;
  c.op = LOOM_COMM_ALL_REDUCE;
  c.num_inputs = c.num_outputs = 1;
  c.inputs = c.outputs = &d;
  c.sequence = 1;
  LoomCommWork* work = nullptr;
  {
    Fault hang("hang");
    REQUIRE(p->collective_start(comm, &c, &work) == nullptr);
    int32_t done = 1;
    REQUIRE(p->work_test(work, &done) == nullptr);
    CHECK(done == 0);
    std::thread aborter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      LoomError* e = p->comm_abort(comm);
      CHECK(e == nullptr);
    });
    const auto t0 = Clock::now();
    LoomError* e = p->work_wait(work, -1);
    aborter.join();
    REQUIRE(e != nullptr);
    CHECK_THAT(std::string(e->message), Contains("all_reduce (sequence 1)") && Contains("aborted"));
    e->destroy(e);
    CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 10.0);  // not the 60 s timeout
  }
  p->work_release(work);
  LoomError* e = p->collective_start(comm, &c, &work);  // later collectives fail at once
  REQUIRE(e != nullptr);
  CHECK_THAT(std::string(e->message), Contains("aborted earlier"));
  e->destroy(e);
  p->comm_destroy(comm);
  check_nothing_leaked();
}
#endif  // LOOM_NCCL_STUB_TESTS
