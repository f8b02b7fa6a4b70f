// The current stream is per thread: 8 threads each make their own sim
// stream current and dispatch at once. sim in strict mode fails every
// kernel and copy that does not get the stream its thread made current, and
// sim_kernel_stream reports the handle the kernel saw.
#include "../sim_stream_util.hpp"
#include "run_threads.hpp"

#include <catch2/catch.hpp>
#include <loom/op_call.h>

using conc::kThreads;
using conc::compare;

using sim_test::handle_of;
using sim_test::kernel_stream;

TEST_CASE("8 threads each dispatch on their own current stream", "[concurrency]") {
  const loom::Device sim("sim");
  loom::set_device_option("sim", "sim_strict_streams", "1");
  auto failures = conc::run_threads(kThreads, [&](int t) -> std::string {
    if (!loom::current_stream(sim).is_default()) return "a new thread starts off the default stream";
    loom::Stream mine(sim);
    loom::StreamGuard guard(mine);
    for (int iter = 0; iter < 20; ++iter) {
      if (loom::current_stream(sim) != mine) return "current stream changed under the thread";
      auto x = loom::full({32}, static_cast<float>(t), loom::DType::Float32, sim);
      if (kernel_stream(x) != handle_of(mine)) return "kernel got another thread's stream";
      auto y = (x + x).cpu();
      if (auto bad = compare("x + x", y.to_vector<float>(), std::vector<float>(32, 2.0f * t));
          !bad.empty())
        return bad;
    }
    mine.synchronize();
    return {};
  });
  loom::set_device_option("sim", "sim_strict_streams", "0");
  CHECK(failures == std::vector<std::string>{});
  CHECK(loom::current_stream(sim).is_default());
}
