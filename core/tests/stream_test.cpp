// Streams, the per-thread current stream, and events, proven on the sim
// device (testing/sim_device), whose kernels and copies check the stream
// they receive. With sim_strict_streams=1 every sim kernel and copy fails
// unless loom hands it the stream it last made current on that thread.
#include "sim_stream_util.hpp"

#include <catch2/catch.hpp>
#include <loom/loom.h>
#include <loom/op_call.h>

#include <thread>

using sim_test::handle_of;
using sim_test::kernel_stream;

namespace {

struct StrictSimStreams {
  StrictSimStreams() { loom::set_device_option("sim", "sim_strict_streams", "1"); }
  ~StrictSimStreams() { loom::set_device_option("sim", "sim_strict_streams", "0"); }
};

}  // namespace

TEST_CASE("a new stream has a handle, the default stream none, and the CPU has no streams") {
  loom::Device sim("sim");
  loom::Stream s(sim);
  CHECK(s.native_handle() != nullptr);
  CHECK_FALSE(s.is_default());
  CHECK(s.device() == sim);
  CHECK(loom::Stream(sim) != s);
  CHECK(loom::Stream::default_stream(sim).is_default());
  CHECK(loom::current_stream(sim) == loom::Stream::default_stream(sim));
  CHECK_NOTHROW(s.synchronize());
  CHECK_NOTHROW(loom::Stream::default_stream(sim).synchronize());
  CHECK_THROWS_WITH(loom::Stream(loom::cpu_device()),
                    Catch::Contains("device 'cpu:0' has no streams") && Catch::Contains("plugin 'cpu'"));
  // The CPU still has a default stream (a neutral value, as in PyTorch).
  CHECK(loom::current_stream(loom::cpu_device()).is_default());
}

TEST_CASE("kernels and copies get the current stream; guards nest and restore") {
  StrictSimStreams strict;
  loom::Device sim("sim");
  auto x = loom::from_vector<float>({1, 2, 3}, {3}, sim);
  loom::Stream s1(sim), s2(sim);
  CHECK(kernel_stream(x) == 0);
  {
    loom::StreamGuard outer(s1);
    CHECK(loom::current_stream(sim) == s1);
    CHECK(kernel_stream(x) == handle_of(s1));
    {
      loom::StreamGuard inner(s2);
      CHECK(loom::current_stream(sim) == s2);
      CHECK(kernel_stream(x) == handle_of(s2));
      // sim's own kernel, copies both ways, and the CPU fallback (matmul):
      // all on s2, or strict sim would have refused them.
      CHECK((x + x).cpu().to_vector<float>() == std::vector<float>{2, 4, 6});
      CHECK(x.view({1, 3}).matmul(x.view({3, 1})).item<float>() == 14.0f);
    }
    CHECK(loom::current_stream(sim) == s1);
    CHECK(kernel_stream(x) == handle_of(s1));
  }
  CHECK(loom::current_stream(sim).is_default());
  CHECK(kernel_stream(x) == 0);
  // A guard on the default stream inside a guard on s1.
  loom::StreamGuard on_s1(s1);
  {
    loom::StreamGuard back_to_default(loom::Stream::default_stream(sim));
    CHECK(kernel_stream(x) == 0);
  }
  CHECK(kernel_stream(x) == handle_of(s1));
}

TEST_CASE("the current stream is per thread and kept alive while current", "[concurrency]") {
  StrictSimStreams strict;
  loom::Device sim("sim");
  auto x = loom::from_vector<float>({1}, {1}, sim);
  {
    loom::Stream temporary(sim);
    loom::set_current_stream(temporary);
  }  // only the current-stream slot holds it now
  const loom::Stream current = loom::current_stream(sim);
  CHECK_FALSE(current.is_default());
  CHECK(kernel_stream(x) == handle_of(current));  // sim checks it is still live

  int64_t seen_elsewhere = -1;
  bool other_default = false;
  std::thread other([&] {
    other_default = loom::current_stream(sim).is_default();
    seen_elsewhere = kernel_stream(x);
  });
  other.join();
  CHECK(other_default);
  CHECK(seen_elsewhere == 0);

  loom::set_current_stream(loom::Stream::default_stream(sim));
  CHECK(kernel_stream(x) == 0);
}

TEST_CASE("events mark streams and time the work between them") {
  loom::Device sim("sim");
  loom::Stream s(sim);
  loom::Event start, stop;
  CHECK_FALSE(start.is_recorded());
  CHECK_FALSE(start.device().has_value());
  CHECK_NOTHROW(start.synchronize());  // never recorded: nothing to wait for
  CHECK_THROWS_WITH(start.elapsed_ms(stop), Catch::Contains("start event was never recorded"));

  start.record(s);
  auto x = loom::ones({64}, loom::DType::Float32, sim);
  {
    loom::StreamGuard on(s);
    for (int i = 0; i < 10; ++i) x = x + x;
  }
  stop.record(s);
  stop.synchronize();
  CHECK(start.is_recorded());
  CHECK(start.device() == sim);
  CHECK(start.elapsed_ms(stop) >= 0.0f);
  CHECK_THROWS_WITH(stop.elapsed_ms(loom::Event()), Catch::Contains("end event was never recorded"));

  // On the current (default) stream of a device; re-recording moves the mark.
  loom::Event again;
  again.record(sim);
  again.record(sim);
  CHECK(again.is_recorded());
  CHECK_THROWS_WITH(loom::Event().record(loom::cpu_device()),
                    Catch::Contains("device 'cpu:0' has no events"));
}
