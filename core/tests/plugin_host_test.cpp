// The host side of the ABI, driven by in-process plugins (no library files):
// negotiation, staged registration, old struct sizes, boxed fallbacks.
#include <catch2/catch.hpp>
#include <loom/loom.h>
#include <loom/plugin.hpp>
#include <loom/op_call.h>
#include <loom/plugin_host.h>

#include <cstdlib>
#include <cstring>

using loom::plugin::Registrar;

namespace {

// "phtest": plain malloc memory that is NOT marked host memory, so the core
// must go through the copy functions.
int32_t one_device(void*) { return 1; }
LoomError* ph_alloc(void*, int32_t, size_t n, void** out) {
  *out = std::malloc(n ? n : 1);
  return nullptr;
}
void ph_free(void*, int32_t, void* p, size_t) { std::free(p); }
LoomError* ph_copy(void*, int32_t, void* dst, const void* src, size_t n, void*) {
  std::memcpy(dst, src, n);
  return nullptr;
}

LoomDeviceTypeDesc device_desc(const char* name, size_t struct_size = sizeof(LoomDeviceTypeDesc)) {
  LoomDeviceTypeDesc d{};
  d.struct_size = struct_size;
  d.name = name;
  d.device_count = one_device;
  d.allocate = ph_alloc;
  d.deallocate = ph_free;
  d.copy_to_host = ph_copy;
  d.copy_from_host = ph_copy;
  return d;
}

// neg, computed directly by the boxed fallback for contiguous float32.
int boxed_runs = 0;
LoomError* ph_boxed(const LoomKernelCall* c) {
  return loom::plugin::guard([&] {
    ++boxed_runs;
    if (std::strcmp(loom::host_api()->op_name(c->op), "neg") != 0)
      throw loom::plugin::Failure(LOOM_STATUS_UNSUPPORTED, "only neg");
    const float* x = loom::plugin::data_ptr<float>(c->inputs[0]);
    float* y = loom::plugin::data_ptr<float>(c->outputs[0]);
    for (int64_t i = 0; i < loom::plugin::numel(c->inputs[0]); ++i) y[i] = -x[i];
  });
}

void twice_kernel(const LoomKernelCall& c) {
  const float* x = loom::plugin::data_ptr<float>(c.inputs[0]);
  float* y = loom::plugin::data_ptr<float>(c.outputs[0]);
  for (int64_t i = 0; i < loom::plugin::numel(c.inputs[0]); ++i) y[i] = 2 * x[i];
}

LoomError* good_init(const LoomHostApi* api) {
  return loom::plugin::guard([&] {
    Registrar r(api);
    static const LoomDeviceTypeDesc desc = device_desc("phtest");
    r.device_type(desc);
    r.def("phtest_twice(Tensor self) -> Tensor");
    r.kernel("phtest_twice", "cpu", loom::plugin::kernel<twice_kernel>,
             LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32));
    r.fallback("phtest", ph_boxed);
  });
}

LoomPluginInfo info_with(const char* name, LoomError* (*init)(const LoomHostApi*),
                         uint32_t major = LOOM_ABI_MAJOR) {
  return LoomPluginInfo{sizeof(LoomPluginInfo), major, LOOM_ABI_MINOR, name, "1.0", init};
}

loom::Tensor call_op(const char* op, const loom::Tensor& t) {
  loom::OpCall call(loom::Dispatcher::instance().op(op));
  call.args.push_back(&t);
  loom::dispatch(call);
  return call.result();
}

}  // namespace

TEST_CASE("a plugin's device type, op, kernel and boxed fallback take effect") {
  static const LoomPluginInfo info = info_with("phtest", good_init);
  auto r = loom::register_plugin(&info, "in-process phtest");
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(r.device_types == std::vector<std::string>{"phtest"});
  CHECK(r.kernels == 1);
  CHECK(r.ops_defined == 1);
  CHECK(r.fallbacks == 1);

  // The plugin-defined op with the default (elementwise) rule.
  auto x = loom::from_vector<float>({1, -2}, {2});
  CHECK(call_op("phtest_twice", x).to_vector<float>() == std::vector<float>{2, -4});

  // phtest has no neg kernel: its boxed fallback runs it, and it is counted.
  loom::Device dev("phtest");
  const auto before = loom::fallback_count("neg", "phtest");
  auto y = (-x.to(dev)).cpu();
  CHECK(y.to_vector<float>() == std::vector<float>{-1, 2});
  CHECK(boxed_runs >= 1);
  CHECK(loom::fallback_count("neg", "phtest") == before + 1);

  // A second plugin claiming the same device type fails and names the first.
  static const LoomPluginInfo dup = info_with("phtest_dup", good_init);
  auto d = loom::register_plugin(&dup, "in-process duplicate");
  CHECK_FALSE(d.ok);
  CHECK_THAT(d.error, Catch::Contains("device type 'phtest' is already provided by plugin 'phtest'"));
}

TEST_CASE("an init that fails leaves no trace") {
  static const LoomPluginInfo info = info_with("failing", [](const LoomHostApi* api) {
    Registrar r(api);
    static const LoomDeviceTypeDesc desc = device_desc("phfail");
    r.device_type(desc);
    return loom::plugin::make_error(LOOM_STATUS_DEVICE_ERROR, "no hardware found");
  });
  auto r = loom::register_plugin(&info, "failing.json");
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.error, Catch::Contains("failing.json") && Catch::Contains("init failed: no hardware found"));
  CHECK(loom::find_device_type_slot("phfail") < 0);
}

TEST_CASE("ABI major mismatch is refused with both versions") {
  static const LoomPluginInfo info = info_with("future", good_init, LOOM_ABI_MAJOR + 1);
  auto r = loom::register_plugin(&info, "future.json");
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.error, Catch::Contains("built for plugin ABI 2.") && Catch::Contains("speaks ABI 1."));
}

TEST_CASE("a kernel for an unknown op, or a throwing init, fails the plugin with a message") {
  static const LoomPluginInfo bad_op = info_with("badop", [](const LoomHostApi* api) {
    return loom::plugin::guard([&] {
      Registrar(api).kernel("no_such_op", "cpu", loom::plugin::kernel<twice_kernel>);
    });
  });
  auto r = loom::register_plugin(&bad_op, "badop.json");
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.error, Catch::Contains("unknown op 'no_such_op'") && Catch::Contains("plugin_host_test.cpp"));

  static const LoomPluginInfo throwing = info_with("throwing", [](const LoomHostApi* api) {
    return loom::plugin::guard([&] { throw std::runtime_error("boom"); });
  });
  auto t = loom::register_plugin(&throwing, "throwing.json");
  CHECK_FALSE(t.ok);
  CHECK_THAT(t.error, Catch::Contains("C++ exception: boom"));
  CHECK_FALSE(loom::register_plugin(nullptr, "null.json").ok);
}

TEST_CASE("structs from an older minor (smaller struct_size) are accepted") {
  static const LoomPluginInfo info = info_with("oldminor", [](const LoomHostApi* api) {
    // A device table without the stream/event slots, a kernel desc without
    // file/line: what a plugin built against an older header would send.
    static LoomDeviceTypeDesc desc = device_desc("phold", offsetof(LoomDeviceTypeDesc, stream_create));
    int32_t id = -1;
    if (LoomError* e = api->device_type_register(api->host, &desc, &id)) return e;
    LoomKernelDesc k{};
    k.struct_size = offsetof(LoomKernelDesc, line);
    k.op = "phtest_twice";
    k.device_type = "cpu";
    k.fn = loom::plugin::kernel<twice_kernel>;
    return api->kernel_register(api->host, &k);
  });
  // phtest_twice exists only if the first test ran; define it if needed.
  if (!loom::Dispatcher::instance().find("phtest_twice")) {
    static const LoomPluginInfo first = info_with("phtest", good_init);
    REQUIRE(loom::register_plugin(&first, "in-process phtest").ok);
  }
  auto r = loom::register_plugin(&info, "oldminor.json");
  CHECK(r.ok);
  CHECK(loom::device_count("phold") == 1);
}

namespace {
LoomError* ph_stream_create(void*, int32_t, void**) { return nullptr; }
LoomError* ph_set_stream(void*, int32_t, void*) { return nullptr; }
LoomError* ph_memory_stats(void*, int32_t, LoomMemoryStats*) { return nullptr; }
}  // namespace

TEST_CASE("a device type that fills part of an all-or-none slot group is refused, naming what is missing") {
  static const LoomPluginInfo half_streams = info_with("halfstreams", [](const LoomHostApi* api) {
    static LoomDeviceTypeDesc desc = device_desc("phhalfstreams");
    desc.stream_create = ph_stream_create;  // without stream_destroy / stream_synchronize
    int32_t id = -1;
    return api->device_type_register(api->host, &desc, &id);
  });
  auto r = loom::register_plugin(&half_streams, "halfstreams.json");
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.error, Catch::Contains("'phhalfstreams' fills part of the stream slots") &&
                          Catch::Contains("missing: stream_destroy, stream_synchronize"));
  CHECK(loom::find_device_type_slot("phhalfstreams") < 0);

  static const LoomPluginInfo stats_only = info_with("statsonly", [](const LoomHostApi* api) {
    static LoomDeviceTypeDesc desc = device_desc("phstatsonly");
    desc.memory_stats = ph_memory_stats;
    int32_t id = -1;
    return api->device_type_register(api->host, &desc, &id);
  });
  auto s = loom::register_plugin(&stats_only, "statsonly.json");
  CHECK_FALSE(s.ok);
  CHECK_THAT(s.error, Catch::Contains("missing: empty_cache, reset_peak_memory_stats"));

  static const LoomPluginInfo current_stream = info_with("curstream", [](const LoomHostApi* api) {
    static LoomDeviceTypeDesc desc = device_desc("phcurstream");
    desc.set_current_stream = ph_set_stream;  // but no streams
    int32_t id = -1;
    return api->device_type_register(api->host, &desc, &id);
  });
  auto c = loom::register_plugin(&current_stream, "curstream.json");
  CHECK_FALSE(c.ok);
  CHECK_THAT(c.error, Catch::Contains("fills set_current_stream but not the stream slots"));
}

TEST_CASE("registration after init is refused") {
  static const LoomHostApi* saved = nullptr;
  static const LoomPluginInfo info = info_with("late", [](const LoomHostApi* api) -> LoomError* {
    saved = api;
    return nullptr;
  });
  REQUIRE(loom::register_plugin(&info, "late.json").ok);
  LoomKernelDesc k{};
  k.struct_size = sizeof k;
  k.op = "add";
  k.device_type = "cpu";
  k.fn = loom::plugin::kernel<twice_kernel>;
  LoomError* e = saved->kernel_register(saved->host, &k);
  REQUIRE(e != nullptr);
  CHECK_THAT(e->message, Catch::Contains("after init"));
  e->destroy(e);
}
