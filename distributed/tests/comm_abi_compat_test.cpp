// The communication ABI's versioning promise (plugin_api/loom/comm_api.h),
// tested as the device ABI's is (registry/tests/abi_compat_test.cpp):
//  - today's comm_api.h keeps every field, size and op code of the frozen
//    1.0 copy (comm_abi_1_0/loom/comm_api.h) where 1.0 put it: checked at
//    compile time below, with both headers in this file;
//  - loom_gloo_abi_1_0, the gloo plugin's own sources compiled against the
//    frozen header (its include directory comes first), loads as a 1.0
//    plugin and passes the collectives scenario of collectives_worker —
//    every op x dtype, async work, send/recv, subgroups — at world sizes 1
//    to 4, so a 1.0 plugin keeps working on every 1.x host.
#include "spawn_util.h"

#include <loom/plugin_api.h>  // at global scope first: the frozen header's own include of it is then a no-op
#include <loom/registry.h>

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

// The frozen header's declarations in a namespace of their own, so both
// versions of each struct can be compared; its macros are read, then
// forgotten before today's header defines them again.
namespace frozen_1_0 {
#include "comm_abi_1_0/loom/comm_api.h"
constexpr unsigned kMajor = LOOM_COMM_ABI_MAJOR;
constexpr unsigned kMinor = LOOM_COMM_ABI_MINOR;
constexpr std::string_view kEntrySymbol = LOOM_COMM_PLUGIN_ENTRY_SYMBOL;
}  // namespace frozen_1_0
#undef LOOM_COMM_API_H
#undef LOOM_COMM_ABI_MAJOR
#undef LOOM_COMM_ABI_MINOR
#undef LOOM_COMM_PLUGIN_ENTRY_SYMBOL
#include <loom/comm_api.h>

// --- today's header against 1.0, at compile time -----------------------------
static_assert(frozen_1_0::kMajor == 1 && frozen_1_0::kMinor == 0, "the frozen copy must stay communication ABI 1.0");
static_assert(LOOM_COMM_ABI_MAJOR == frozen_1_0::kMajor,
              "the communication ABI's major changed: 1.x plugins are now refused, and this test (with its frozen "
              "header) belongs to the old major");
static_assert(LOOM_COMM_ABI_MINOR >= frozen_1_0::kMinor, "the communication ABI's minor went down");
static_assert(frozen_1_0::kEntrySymbol == LOOM_COMM_PLUGIN_ENTRY_SYMBOL, "the entry symbol's name changed");

// A 1.0 field keeps its offset and size; a struct only grows.
#define LOOM_SAME_FIELD(S, f)                                                                           \
  static_assert(offsetof(frozen_1_0::S, f) == offsetof(::S, f), #S "." #f " moved since comm ABI 1.0"); \
  static_assert(sizeof(frozen_1_0::S::f) == sizeof(::S::f), #S "." #f " changed size since comm ABI 1.0")
// ... and, for a field whose type names no comm_api.h type, its type.
#define LOOM_SAME_SCALAR(S, f) \
  LOOM_SAME_FIELD(S, f);       \
  static_assert(std::is_same_v<decltype(frozen_1_0::S::f), decltype(::S::f)>, #S "." #f " changed type since comm ABI 1.0")
#define LOOM_GROWS_ONLY(S) static_assert(sizeof(::S) >= sizeof(frozen_1_0::S), #S " shrank since comm ABI 1.0")

LOOM_GROWS_ONLY(LoomCommStore);
LOOM_SAME_SCALAR(LoomCommStore, struct_size);
LOOM_SAME_SCALAR(LoomCommStore, host_data);
LOOM_SAME_SCALAR(LoomCommStore, set);
LOOM_SAME_SCALAR(LoomCommStore, get);
LOOM_SAME_SCALAR(LoomCommStore, free_value);
LOOM_SAME_SCALAR(LoomCommStore, wait);

LOOM_GROWS_ONLY(LoomCommConfig);
LOOM_SAME_SCALAR(LoomCommConfig, struct_size);
LOOM_SAME_SCALAR(LoomCommConfig, rank);
LOOM_SAME_SCALAR(LoomCommConfig, world_size);
LOOM_SAME_SCALAR(LoomCommConfig, device_index);
LOOM_SAME_SCALAR(LoomCommConfig, reserved);
LOOM_SAME_SCALAR(LoomCommConfig, timeout_ms);
LOOM_SAME_FIELD(LoomCommConfig, store);
LOOM_SAME_SCALAR(LoomCommConfig, local_address);

LOOM_GROWS_ONLY(LoomCollective);
LOOM_SAME_SCALAR(LoomCollective, struct_size);
LOOM_SAME_SCALAR(LoomCollective, op);
LOOM_SAME_SCALAR(LoomCollective, reduce_op);
LOOM_SAME_SCALAR(LoomCollective, root);
LOOM_SAME_SCALAR(LoomCollective, tag);
LOOM_SAME_SCALAR(LoomCollective, num_inputs);
LOOM_SAME_SCALAR(LoomCollective, num_outputs);
LOOM_SAME_SCALAR(LoomCollective, inputs);
LOOM_SAME_SCALAR(LoomCollective, outputs);
LOOM_SAME_SCALAR(LoomCollective, sequence);
LOOM_SAME_SCALAR(LoomCollective, stream);
LOOM_SAME_SCALAR(LoomCollective, flags);
LOOM_SAME_SCALAR(LoomCollective, reserved);
LOOM_SAME_SCALAR(LoomCollective, signature);

LOOM_GROWS_ONLY(LoomCommPluginInfo);
LOOM_SAME_SCALAR(LoomCommPluginInfo, struct_size);
LOOM_SAME_SCALAR(LoomCommPluginInfo, abi_major);
LOOM_SAME_SCALAR(LoomCommPluginInfo, abi_minor);
LOOM_SAME_SCALAR(LoomCommPluginInfo, name);
LOOM_SAME_SCALAR(LoomCommPluginInfo, version);
LOOM_SAME_SCALAR(LoomCommPluginInfo, device_type);
LOOM_SAME_SCALAR(LoomCommPluginInfo, dtypes);
LOOM_SAME_SCALAR(LoomCommPluginInfo, probe);
LOOM_SAME_FIELD(LoomCommPluginInfo, comm_create);
LOOM_SAME_FIELD(LoomCommPluginInfo, comm_destroy);
LOOM_SAME_FIELD(LoomCommPluginInfo, comm_abort);
LOOM_SAME_FIELD(LoomCommPluginInfo, collective_start);
LOOM_SAME_FIELD(LoomCommPluginInfo, work_wait);
LOOM_SAME_FIELD(LoomCommPluginInfo, work_test);
LOOM_SAME_FIELD(LoomCommPluginInfo, work_release);

// Op codes, reduce ops and flag bits never change meaning.
#define LOOM_SAME_CODE(c) static_assert(int64_t(frozen_1_0::c) == int64_t(::c), #c " changed since comm ABI 1.0")
LOOM_SAME_CODE(LOOM_COMM_ALL_REDUCE);
LOOM_SAME_CODE(LOOM_COMM_BROADCAST);
LOOM_SAME_CODE(LOOM_COMM_REDUCE);
LOOM_SAME_CODE(LOOM_COMM_ALL_GATHER);
LOOM_SAME_CODE(LOOM_COMM_REDUCE_SCATTER);
LOOM_SAME_CODE(LOOM_COMM_ALL_TO_ALL);
LOOM_SAME_CODE(LOOM_COMM_GATHER);
LOOM_SAME_CODE(LOOM_COMM_SCATTER);
LOOM_SAME_CODE(LOOM_COMM_BARRIER);
LOOM_SAME_CODE(LOOM_COMM_SEND);
LOOM_SAME_CODE(LOOM_COMM_RECV);
LOOM_SAME_CODE(LOOM_COMM_SUM);
LOOM_SAME_CODE(LOOM_COMM_PRODUCT);
LOOM_SAME_CODE(LOOM_COMM_MIN);
LOOM_SAME_CODE(LOOM_COMM_MAX);
LOOM_SAME_CODE(LOOM_COMM_FLAG_BLOCKING);

namespace {

using namespace loom_dist_test;

const char* const kBackend = "gloo_abi_1_0";

// The workers find the test plugin's manifest first, the rest (cpu) where
// they always do.
std::string plugin_path() {
  const char* old = std::getenv("LOOM_PLUGIN_PATH");
  return std::string("LOOM_PLUGIN_PATH=") + LOOM_COMM_ABI_1_0_PLUGINS + (old && *old ? std::string(":") + old : "");
}

}  // namespace

TEST_CASE("comm_api.h keeps communication ABI 1.0's layout", "[distributed][abi]") {
  // The static_asserts above are the test; this records what they compared.
  CHECK(sizeof(LoomCommPluginInfo) >= sizeof(frozen_1_0::LoomCommPluginInfo));
  CHECK(sizeof(LoomCollective) >= sizeof(frozen_1_0::LoomCollective));
  CHECK(LOOM_COMM_ABI_MAJOR == frozen_1_0::kMajor);
}

TEST_CASE("a gloo plugin built against the frozen communication ABI 1.0 header loads as a 1.0 plugin",
          "[distributed][abi]") {
  loom::registry::Registry registry(std::vector<std::string>{LOOM_COMM_ABI_1_0_PLUGINS});
  std::string why;
  const LoomCommPluginInfo* info = registry.load_comm_backend(kBackend, why);
  INFO(why);
  REQUIRE(info != nullptr);
  CHECK(info->struct_size == sizeof(frozen_1_0::LoomCommPluginInfo));
  CHECK(info->abi_major == 1);
  CHECK(info->abi_minor == 0);
  CHECK(std::string(info->device_type) == "cpu");
  loom::registry::PluginRecord rec;
  REQUIRE(registry.find(kBackend, rec));
  INFO("reason: " << rec.reason);
  CHECK(rec.state == loom::registry::PluginState::Loaded);
  CHECK(rec.abi_version == "1.0");
  CHECK(rec.plugin_abi_version == "1.0");
  CHECK(rec.comm_backends == std::vector<std::string>{kBackend});
  CHECK(rec.library_path.find("libloom_gloo_abi_1_0.so") != std::string::npos);
}

TEST_CASE("a gloo plugin built against the frozen communication ABI 1.0 header passes every collective and dtype, "
          "world sizes 1 to 4",
          "[distributed][abi][collectives]") {
  for (int world : {1, 2, 3, 4}) {
    const std::string init = "tcp://127.0.0.1:" + std::to_string(free_port());
    std::vector<Command> ranks;
    for (int r = 0; r < world; ++r)
      ranks.push_back({{LOOM_DIST_WORKER, "--backend", kBackend, "collectives", std::to_string(r),
                        std::to_string(world), init, "30000"},
                       {plugin_path()}});
    const auto result = run_together(ranks, std::chrono::seconds(120),
                                     std::string(LOOM_DIST_TEST_DIR) + "/comm_abi_1_0_w" + std::to_string(world));
    for (size_t r = 0; r < result.size(); ++r) {
      INFO("world " << world << ", rank " << r << " " << describe(result[r]) << ":\n" << result[r].log);
      CHECK(succeeded(result[r]));
    }
  }
}
