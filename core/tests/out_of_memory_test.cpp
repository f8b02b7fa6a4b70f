// Out of memory on every device: an impossible allocation raises loom::Error
// of kind OutOfMemory naming the device and the bytes, never aborts; a byte
// count past 2^63 (numel * itemsize overflowing) is refused before any
// arithmetic wraps. After each failure the device still allocates.
#include <loom/error.h>
#include <loom/ops.h>
#include <loom/tensor.h>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using Catch::Matchers::Contains;

namespace {

// `f` must throw loom::Error(OutOfMemory) whose message holds every part.
template <class F>
void expect_oom(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    FAIL("expected an out-of-memory loom::Error");
  } catch (const loom::Error& e) {
    INFO("message: " << e.what());
    CHECK(e.kind() == loom::ErrorKind::OutOfMemory);
    for (const auto& p : parts) CHECK_THAT(std::string(e.what()), Contains(p));
  }
}

// Still usable after a failed allocation.
void check_device_works(loom::Device dev) {
  auto t = loom::full({3}, 2.0, loom::DType::Float32, dev);
  CHECK((t.add(t).to_vector<float>() == std::vector<float>{4.f, 4.f, 4.f}));
}

}  // namespace

TEST_CASE("an impossible allocation is an OutOfMemory error naming device and bytes",
          "[memory]") {
  const int64_t n = int64_t{1} << 50;  // 4 PiB of float32: no machine has it
  const std::string bytes = std::to_string(n * 4);
  for (const char* type : {"cpu", "sim"}) {
    INFO("device " << type);
    loom::Device dev(type);
    expect_oom([&] { loom::empty({n}, loom::DType::Float32, dev); },
               {"allocating " + bytes + " bytes on " + dev.str(), "out of memory"});
    // Through an op's output allocation too (expand is a view: no memory).
    auto big = loom::zeros({1}, loom::DType::Float32, dev).expand({n});
    expect_oom([&] { (void)(big + big); }, {"allocating " + bytes + " bytes on " + dev.str()});
    check_device_works(dev);
  }
}

TEST_CASE("a byte count past 2^63 is refused, not wrapped", "[memory]") {
  for (const char* type : {"cpu", "sim"}) {
    INFO("device " << type);
    loom::Device dev(type);
    // numel fits in int64 but numel * 8 does not.
    expect_oom([&] { loom::empty({int64_t{1} << 61}, loom::DType::Float64, dev); },
               {"size [2305843009213693952]", "float64", dev.str(), "more than 2^63 bytes"});
    // numel itself overflows int64 (each size alone is valid).
    expect_oom([&] { loom::empty({int64_t{1} << 40, int64_t{1} << 40}, loom::DType::Float32, dev); },
               {"size [1099511627776, 1099511627776]", "more than 2^63 bytes"});
    check_device_works(dev);
  }
}
