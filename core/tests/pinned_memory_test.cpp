// Pinned host memory, non-blocking copies and stream ordering (ABI 1.3),
// proven on the sim device: its copies of pinned memory stay queued on their
// stream until something waits for them (testing/sim_device/sim_queue.hpp),
// so these tests see whether loom waits where it must and not where the user
// asked it not to.
#include <catch2/catch.hpp>
#include <loom/loom.h>
#include <loom/plugin_host.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace {

loom::Tensor pinned_iota(int64_t n) {
  auto x = loom::arange(n, loom::DType::Float32).pin_memory("sim");
  REQUIRE(x.is_pinned());
  return x;
}

}  // namespace

TEST_CASE("pin_memory copies a host tensor into pinned memory, once") {
  auto x = loom::arange(6, loom::DType::Float32).reshape({2, 3}).t();  // strided
  CHECK_FALSE(x.is_pinned());
  auto p = x.pin_memory("sim");
  CHECK(p.is_pinned());
  CHECK(p.device() == loom::cpu_device());
  CHECK(p.is_contiguous());
  CHECK(p.sizes() == x.sizes());
  CHECK(p.to_vector<float>() == x.to_vector<float>());
  CHECK(p.pin_memory("sim").is_same(p));      // already pinned for sim
  CHECK(p.narrow(0, 1, 2).is_pinned());       // views of pinned memory are pinned
  CHECK(p.clone().is_pinned() == false);      // ordinary ops allocate ordinary memory
  auto empty = loom::empty({0}, loom::DType::Float32).pin_memory("sim");
  CHECK(empty.is_pinned());
}

TEST_CASE("pin_memory refuses what cannot be pinned, naming it") {
  auto x = loom::ones({2});
  CHECK_THROWS_WITH(x.pin_memory("cpu"), Catch::Contains("device type 'cpu' has no pinned host memory"));
  CHECK_THROWS_WITH(x.to(loom::Device("sim")).pin_memory("sim"),
                    Catch::Contains("only tensors in host memory can be pinned") && Catch::Contains("sim:0"));
  CHECK_THROWS_WITH(x.pin_memory("nosuchdevice"), Catch::Contains("nosuchdevice"));
}

TEST_CASE("a non-blocking copy from pinned memory stays queued until the stream is waited for") {
  loom::Device sim("sim");
  auto host = pinned_iota(4);
  auto dev = host.to(sim, /*non_blocking=*/true);
  CHECK_FALSE(loom::Stream::default_stream(sim).query());  // still queued
  // Writing the source before the copy ran is the user's race (as in CUDA);
  // sim makes it deterministic: the copy reads the new values.
  host.data_ptr<float>()[0] = 100;
  loom::Stream::default_stream(sim).synchronize();
  CHECK(loom::Stream::default_stream(sim).query());
  CHECK(dev.cpu().to_vector<float>() == std::vector<float>{100, 1, 2, 3});
}

TEST_CASE("a blocking copy from pinned memory is complete on return") {
  loom::Device sim("sim");
  auto host = pinned_iota(4);
  auto dev = host.to(sim);  // non_blocking=false: loom waits (sim's synchronize)
  CHECK(loom::Stream::default_stream(sim).query());
  host.data_ptr<float>()[0] = 100;
  CHECK(dev.cpu().to_vector<float>() == std::vector<float>{0, 1, 2, 3});
  // The same on a side stream: loom waits for that stream.
  loom::Stream side(sim);
  loom::StreamGuard on(side);
  auto dev2 = host.to(sim);
  host.data_ptr<float>()[1] = 200;
  CHECK(dev2.cpu().to_vector<float>() == std::vector<float>{100, 1, 2, 3});
}

TEST_CASE("work on the same stream runs after a queued copy (stream order)") {
  loom::Device sim("sim");
  auto host = pinned_iota(3);
  auto dev = host.to(sim, true);
  auto y = dev * 2.0;  // a sim kernel on the default stream runs the copy first
  CHECK(y.cpu().to_vector<float>() == std::vector<float>{0, 2, 4});
}

TEST_CASE("a non-blocking copy to the host lands in pinned memory, complete after a wait") {
  loom::Device sim("sim");
  auto dev = loom::arange(5, loom::DType::Float32).to(sim);
  auto back = dev.to(loom::cpu_device(), /*non_blocking=*/true);
  CHECK(back.is_pinned());
  CHECK_FALSE(loom::Stream::default_stream(sim).query());
  loom::Event done;
  done.record(sim);
  CHECK_FALSE(done.query());
  done.synchronize();
  CHECK(done.query());
  std::vector<float> got(5);
  std::memcpy(got.data(), back.data_ptr<float>(), sizeof(float) * 5);  // read the host bytes directly
  CHECK(got == std::vector<float>{0, 1, 2, 3, 4});
  // A blocking copy to the host never returns pinned memory nor leaves work queued.
  auto plain = dev.to(loom::cpu_device());
  CHECK_FALSE(plain.is_pinned());
  CHECK(loom::Stream::default_stream(sim).query());
}

TEST_CASE("a pinned block freed with a copy in flight is not lost: the copy still completes") {
  loom::Device sim("sim");
  loom::Tensor dev;
  {
    auto host = pinned_iota(4);
    dev = host.to(sim, true);
  }  // host freed here: sim finishes the queued copy before giving the block back
  CHECK(dev.cpu().to_vector<float>() == std::vector<float>{0, 1, 2, 3});
}

TEST_CASE("wait_stream and wait_event order one stream after another without a host wait") {
  loom::Device sim("sim");
  loom::Stream producer(sim), consumer(sim);
  auto host = pinned_iota(3);
  loom::Tensor dev;
  {
    loom::StreamGuard on(producer);
    dev = host.to(sim, true);  // queued on the producer stream
  }
  CHECK_FALSE(producer.query());
  consumer.wait_stream(producer);  // sim has no later work to hold back, so it finishes the producer's
  CHECK(producer.query());
  loom::StreamGuard on(consumer);
  CHECK((dev + 1.0).cpu().to_vector<float>() == std::vector<float>{1, 2, 3});

  // wait_event on an event never recorded is a no-op; across devices it is refused.
  loom::Event never;
  CHECK_NOTHROW(consumer.wait_event(never));
  CHECK(never.query());
  loom::Event marker;
  {
    loom::StreamGuard p(producer);
    auto more = host.to(sim, true);
    marker.record(producer);
    CHECK_FALSE(marker.query());
    marker.wait(consumer);
    CHECK(marker.query());
  }
}

TEST_CASE("stream queries on a device without streams are always done") {
  CHECK(loom::Stream::default_stream(loom::cpu_device()).query());
  loom::Stream s = loom::Stream::default_stream(loom::cpu_device());
  CHECK_NOTHROW(s.wait_stream(loom::Stream::default_stream(loom::cpu_device())));
}

namespace {
// A plugin built against ABI 1.2: streams and events, none of the 1.3 slots.
int32_t one_device(void*) { return 1; }
LoomError* host_alloc(void*, int32_t, size_t n, void** out) {
  *out = std::malloc(n ? n : 1);
  return nullptr;
}
void host_free(void*, int32_t, void* p, size_t) { std::free(p); }
LoomError* host_copy(void*, int32_t, void* dst, const void* src, size_t n, void*) {
  std::memcpy(dst, src, n);
  return nullptr;
}
int stream_token = 0, event_token = 0, event_syncs = 0;
LoomError* make_stream(void*, int32_t, void** out) {
  *out = &stream_token;
  return nullptr;
}
void drop_stream(void*, int32_t, void*) {}
LoomError* sync_stream(void*, int32_t, void*) { return nullptr; }
LoomError* make_event(void*, int32_t, void** out) {
  *out = &event_token;
  return nullptr;
}
void drop_event(void*, int32_t, void*) {}
LoomError* record_event(void*, int32_t, void*, void*) { return nullptr; }
LoomError* sync_event(void*, int32_t, void*) {
  ++event_syncs;
  return nullptr;
}
LoomError* elapsed(void*, int32_t, void*, void*, float* ms) {
  *ms = 0;
  return nullptr;
}
}  // namespace

TEST_CASE("a plugin built before ABI 1.3: no pinned memory, and stream waits fall back to host waits") {
  static const LoomPluginInfo info{
      sizeof(LoomPluginInfo), LOOM_ABI_MAJOR, 2, "rt_abi12", "1.0", [](const LoomHostApi* api) {
        static LoomDeviceTypeDesc desc{};
        desc.struct_size = offsetof(LoomDeviceTypeDesc, host_allocate);
        desc.name = "rtabi12";
        desc.device_count = one_device;
        desc.allocate = host_alloc;
        desc.deallocate = host_free;
        desc.copy_to_host = host_copy;
        desc.copy_from_host = host_copy;
        desc.stream_create = make_stream;
        desc.stream_destroy = drop_stream;
        desc.stream_synchronize = sync_stream;
        desc.event_create = make_event;
        desc.event_destroy = drop_event;
        desc.event_record = record_event;
        desc.event_synchronize = sync_event;
        desc.event_elapsed_ms = elapsed;
        int32_t id = -1;
        return api->device_type_register(api->host, &desc, &id);
      }};
  auto r = loom::register_plugin(&info, "in-process rt_abi12");
  INFO(r.error);
  REQUIRE(r.ok);
  const auto f = loom::device_runtime_features("rtabi12");
  CHECK((f.streams && f.events));
  CHECK_FALSE((f.pinned_memory || f.stream_wait || f.queries));
  CHECK_THROWS_WITH(loom::ones({2}).pin_memory("rtabi12"),
                    Catch::Contains("'rtabi12' has no pinned host memory") && Catch::Contains("rt_abi12"));
  loom::Device dev("rtabi12");
  loom::Stream a(dev), b = loom::Stream::default_stream(dev);
  const int before = event_syncs;
  b.wait_stream(a);  // no stream_wait_event: loom waits on the host instead
  CHECK(event_syncs == before + 1);
  CHECK_THROWS_WITH(a.query(), Catch::Contains("device 'rtabi12:0' has no stream queries"));
  // non_blocking is only a hint: a copy of ordinary memory completes anyway.
  auto x = loom::from_vector<float>({1, 2}, {2}).to(dev, true);
  CHECK(x.to(loom::cpu_device(), true).to_vector<float>() == std::vector<float>{1, 2});
}
