// Device properties, allocator statistics, options and the feature query
// (ABI 1.2 slots), on sim (which fills them), on the CPU (which does not),
// and on a plugin built against ABI 1.1 (whose table ends before them).
#include <catch2/catch.hpp>
#include <loom/loom.h>
#include <loom/plugin.hpp>
#include <loom/plugin_host.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// Restores LOOM_SIM_TOTAL_MEMORY (read by sim at every allocation).
struct SimMemoryLimit {
  explicit SimMemoryLimit(uint64_t bytes) {
    setenv("LOOM_SIM_TOTAL_MEMORY", std::to_string(bytes).c_str(), 1);
  }
  ~SimMemoryLimit() { unsetenv("LOOM_SIM_TOTAL_MEMORY"); }
};

}  // namespace

TEST_CASE("device properties: sim reports them, the CPU names what it lacks") {
  loom::Device sim("sim");
  auto p = loom::device_properties(sim);
  CHECK(p.name == "loom sim device");
  CHECK(p.total_memory == (uint64_t{8} << 30));
  CHECK(p.multi_processor_count == 1);
  CHECK(p.major == 0);
  {
    SimMemoryLimit limit(12345);
    CHECK(loom::device_properties(sim).total_memory == 12345);
  }
  CHECK_THROWS_WITH(loom::device_properties(loom::cpu_device()),
                    Catch::Contains("device 'cpu:0' has no device properties") &&
                        Catch::Contains("plugin 'cpu'"));
}

TEST_CASE("memory statistics follow allocations and frees") {
  loom::Device sim("sim");
  const auto before = loom::memory_stats(sim);
  CHECK(before.reserved_bytes == before.allocated_bytes);  // sim caches nothing
  {
    auto t = loom::empty({1024}, loom::DType::Float32, sim);
    const auto during = loom::memory_stats(sim);
    CHECK(during.allocated_bytes == before.allocated_bytes + 4096);
    CHECK(during.reserved_bytes == during.allocated_bytes);
    CHECK(during.max_allocated_bytes >= during.allocated_bytes);
    CHECK(during.num_allocs == before.num_allocs + 1);
    CHECK(during.num_device_allocs == during.num_allocs);
  }
  const auto after = loom::memory_stats(sim);
  CHECK(after.allocated_bytes == before.allocated_bytes);
  CHECK(after.max_allocated_bytes >= before.allocated_bytes + 4096);
  CHECK_NOTHROW(loom::empty_cache(sim));
  loom::reset_peak_memory_stats(sim);
  CHECK(loom::memory_stats(sim).max_allocated_bytes == after.allocated_bytes);
  CHECK(loom::memory_stats(sim).max_reserved_bytes == after.reserved_bytes);
}

TEST_CASE("allocating past the device's memory fails as out of memory and is counted") {
  loom::Device sim("sim");
  const auto before = loom::memory_stats(sim);
  SimMemoryLimit limit(before.allocated_bytes + 1024);
  try {
    (void)loom::empty({1024}, loom::DType::Float32, sim);
    FAIL("4096 bytes fitted in 1024");
  } catch (const loom::Error& e) {
    CHECK(e.kind() == loom::ErrorKind::OutOfMemory);
    CHECK_THAT(e.what(), Catch::Contains("out of memory allocating 4096 bytes on sim:0"));
  }
  CHECK(loom::memory_stats(sim).num_ooms == before.num_ooms + 1);
}

TEST_CASE("cpu memory statistics count tensors of 8 KiB and more, and the block cache") {
  const loom::Device cpu = loom::cpu_device();
  loom::empty_cache(cpu);
  loom::reset_peak_memory_stats(cpu);
  const auto before = loom::memory_stats(cpu);
  constexpr uint64_t kBytes = uint64_t{4} << 20;
  {
    const loom::Tensor a = loom::empty({1 << 20}, loom::DType::Float32, cpu);
    const auto during = loom::memory_stats(cpu);
    CHECK(during.allocated_bytes == before.allocated_bytes + kBytes);
    CHECK(during.max_allocated_bytes == during.allocated_bytes);
    CHECK(during.reserved_bytes >= before.reserved_bytes + kBytes);
    CHECK(during.num_allocs == before.num_allocs + 1);
    CHECK(during.num_device_allocs == before.num_device_allocs + 1);
    const loom::Tensor small = loom::empty({16}, loom::DType::Float32, cpu);  // from a thread's cache: not counted
    CHECK(loom::memory_stats(cpu).allocated_bytes == during.allocated_bytes);
  }
  const auto after = loom::memory_stats(cpu);
  CHECK(after.allocated_bytes == before.allocated_bytes);
  CHECK(after.max_allocated_bytes == before.allocated_bytes + kBytes);
  CHECK(after.reserved_bytes >= before.reserved_bytes + kBytes);  // kept in the block cache
  {
    const loom::Tensor again = loom::empty({1 << 20}, loom::DType::Float32, cpu);
    CHECK(loom::memory_stats(cpu).num_cache_hits == after.num_cache_hits + 1);
  }
  loom::empty_cache(cpu);
  CHECK(loom::memory_stats(cpu).reserved_bytes < after.reserved_bytes);
  loom::reset_peak_memory_stats(cpu);
  const auto reset = loom::memory_stats(cpu);
  CHECK(reset.max_allocated_bytes == reset.allocated_bytes);
  CHECK(reset.max_reserved_bytes == reset.reserved_bytes);
}

TEST_CASE("device options: known key, bad value, unknown key, no options") {
  CHECK_NOTHROW(loom::set_device_option("sim", "sim_strict_streams", "1"));
  CHECK_NOTHROW(loom::set_device_option("sim", "sim_strict_streams", "0"));
  CHECK_THROWS_WITH(loom::set_device_option("sim", "sim_strict_streams", "yes"),
                    Catch::Contains("takes \"0\" or \"1\", not \"yes\""));
  try {
    loom::set_device_option("sim", "allow_tf32", "1");
    FAIL("sim accepted an unknown option");
  } catch (const loom::Error& e) {
    CHECK(e.kind() == loom::ErrorKind::NotFound);
    CHECK_THAT(e.what(), Catch::Contains("unknown option 'allow_tf32'") &&
                             Catch::Contains("set_device_option('sim'"));
  }
  CHECK_THROWS_WITH(loom::set_device_option("cpu", "allow_tf32", "1"),
                    Catch::Contains("device type 'cpu' has no options") && Catch::Contains("'allow_tf32'"));
  CHECK_THROWS_WITH(loom::set_device_option("nosuchtype", "k", "v"),
                    Catch::Contains("device type 'nosuchtype'"));
}

TEST_CASE("feature query and device counts that load the plugin") {
  const auto sim = loom::device_runtime_features("sim");
  CHECK((sim.streams && sim.events && sim.properties && sim.memory_stats && sim.current_stream &&
         sim.options && sim.pinned_memory && sim.stream_wait && sim.queries));
  const auto cpu = loom::device_runtime_features("cpu");
  CHECK(cpu.memory_stats);
  CHECK_FALSE((cpu.streams || cpu.events || cpu.properties || cpu.current_stream || cpu.options ||
               cpu.pinned_memory || cpu.stream_wait || cpu.queries));
  CHECK(loom::available_device_count("sim") == 1);
  CHECK(loom::available_device_count("nosuchtype") == 0);
  // No CUDA plugin in this build tree, or one without a GPU: never an error.
  CHECK(loom::cuda::is_available() == (loom::cuda::device_count() > 0));
}

namespace {
int32_t one_device(void*) { return 1; }
LoomError* old_alloc(void*, int32_t, size_t n, void** out) {
  *out = std::malloc(n ? n : 1);
  return nullptr;
}
void old_free(void*, int32_t, void* p, size_t) { std::free(p); }
LoomError* old_copy(void*, int32_t, void* dst, const void* src, size_t n, void*) {
  std::memcpy(dst, src, n);
  return nullptr;
}
LoomError* must_not_be_called(void*, int32_t, LoomMemoryStats*) {
  return loom::plugin::make_error(LOOM_STATUS_INTERNAL, "read past the plugin's struct_size");
}
}  // namespace

TEST_CASE("a plugin built before ABI 1.2 has none of the 1.2 slots, whatever lies past its table") {
  static const LoomPluginInfo info{
      sizeof(LoomPluginInfo), LOOM_ABI_MAJOR, 1, "rt_abi11", "1.0", [](const LoomHostApi* api) {
        // A 1.1 table followed by bytes that would be 1.2 slots if the host
        // read past struct_size.
        static LoomDeviceTypeDesc desc{};
        desc.struct_size = offsetof(LoomDeviceTypeDesc, device_properties);
        desc.name = "rtabi11";
        desc.device_count = one_device;
        desc.allocate = old_alloc;
        desc.deallocate = old_free;
        desc.copy_to_host = old_copy;
        desc.copy_from_host = old_copy;
        desc.memory_stats = must_not_be_called;
        int32_t id = -1;
        return api->device_type_register(api->host, &desc, &id);
      }};
  auto r = loom::register_plugin(&info, "in-process rt_abi11");
  INFO(r.error);
  REQUIRE(r.ok);
  const auto f = loom::device_runtime_features("rtabi11");
  CHECK_FALSE((f.properties || f.memory_stats || f.current_stream || f.options));
  loom::Device dev("rtabi11");
  CHECK_THROWS_WITH(loom::memory_stats(dev), Catch::Contains("device 'rtabi11:0' has no memory statistics"));
  CHECK_THROWS_WITH(loom::reset_peak_memory_stats(dev), Catch::Contains("device 'rtabi11:0' has no memory statistics"));
  CHECK_NOTHROW(loom::empty_cache(dev));  // no cache to empty
  // Streams absent: tensors still move, on the default stream.
  auto x = loom::from_vector<float>({1, 2}, {2}, dev);
  CHECK(x.cpu().to_vector<float>() == std::vector<float>{1, 2});
  CHECK(loom::current_stream(dev).is_default());
}
