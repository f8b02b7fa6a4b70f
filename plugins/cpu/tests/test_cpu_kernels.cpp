// Unit tests of the CPU plugin without the core: a fake LoomHostApi records
// what the plugin's init registers, and kernels are called with hand-built
// LoomTensorDesc descriptors and checked against plain reference loops.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <loom/plugin/philox.hpp>

#include <cmath>
#include <cstring>
#include <limits>

using namespace loom_test;
using loom::plugin::BFloat16;
using loom::plugin::Half;

// ---------------------------------------------------------- registration ---

TEST_CASE("init registers the cpu device type and every kernel", "[registration]") {
  const FakeHost& h = host();
  REQUIRE(h.devices.count("cpu") == 1);
  const LoomDeviceTypeDesc& d = h.devices.at("cpu");
  CHECK(d.flags == LOOM_DEVICE_HOST_MEMORY);
  CHECK(d.device_count(d.device_data) == 1);
  CHECK(d.stream_create == nullptr);
  CHECK(d.event_create == nullptr);
  for (const char* op : {"fill_", "copy_", "add", "sub", "mul", "div", "neg", "relu", "exp", "sum",
                         "matmul", "uniform_", "normal_"}) {
    INFO(op);
    REQUIRE(h.kernels.count(op) == 1);
    CHECK(h.kernels.at(op).flags == 0);
    CHECK(h.kernels.at(op).line > 0);
  }
  const uint64_t floating = LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT16) | LOOM_DTYPE_BIT(LOOM_DTYPE_BFLOAT16) |
                            LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32) | LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT64);
  CHECK(h.kernels.at("exp").dtypes == floating);
  CHECK(h.kernels.at("div").dtypes == (((uint64_t{1} << LOOM_DTYPE_COUNT) - 1) & ~LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL)));
  CHECK((h.kernels.at("neg").dtypes & LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL)) == 0);
  CHECK((h.kernels.at("matmul").dtypes & LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL)) == 0);
  CHECK(h.kernels.at("add").dtypes == (uint64_t{1} << LOOM_DTYPE_COUNT) - 1);
}

// ---------------------------------------------------------------- device ---

TEST_CASE("allocator: alignment, zero bytes, copies, out of memory", "[device]") {
  const LoomDeviceTypeDesc& d = host().devices.at("cpu");
  void* p = reinterpret_cast<void*>(1);
  REQUIRE(d.allocate(d.device_data, 0, 0, &p) == nullptr);
  d.deallocate(d.device_data, 0, p, 0);

  for (size_t n : {size_t{1}, size_t{63}, size_t{64}, size_t{1000}, size_t{1} << 20}) {
    void* q = nullptr;
    REQUIRE(d.allocate(d.device_data, 0, n, &q) == nullptr);
    REQUIRE(q != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(q) % 64 == 0);
    std::vector<unsigned char> src(n), back(n);
    for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7);
    REQUIRE(d.copy_from_host(d.device_data, 0, q, src.data(), n, nullptr) == nullptr);
    void* r = nullptr;
    REQUIRE(d.allocate(d.device_data, 0, n, &r) == nullptr);
    REQUIRE(d.copy_on_device(d.device_data, 0, r, 0, q, n, nullptr) == nullptr);
    REQUIRE(d.copy_to_host(d.device_data, 0, back.data(), r, n, nullptr) == nullptr);
    CHECK(back == src);
    d.deallocate(d.device_data, 0, q, n);
    d.deallocate(d.device_data, 0, r, n);
  }
  REQUIRE(d.synchronize(d.device_data, 0) == nullptr);

  for (size_t absurd : {std::numeric_limits<size_t>::max(), std::numeric_limits<size_t>::max() / 2,
                        size_t{1} << 62}) {
    void* q = reinterpret_cast<void*>(1);
    LoomError* e = d.allocate(d.device_data, 0, absurd, &q);
    REQUIRE(e != nullptr);
    CHECK(e->code == LOOM_STATUS_OUT_OF_MEMORY);
    CHECK(std::string(e->message).find(std::to_string(absurd)) != std::string::npos);
    CHECK(q == nullptr);
    e->destroy(e);
  }
}

// ------------------------------------------------------------ bad calls ---

TEST_CASE("bad dtypes and malformed calls return errors", "[errors]") {
  Tensor a = make(LOOM_DTYPE_FLOAT32, {4}), b = make(LOOM_DTYPE_FLOAT32, {4}),
         o = make(LOOM_DTYPE_FLOAT32, {4});
  Tensor bad = o;
  bad.dtype = 42;
  CHECK(status_of("add", {bad.desc(), bad.desc()}, {bad.desc()}, {int_value(1)}) ==
        LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("neg", {bad.desc()}, {bad.desc()}) == LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("fill_", {bad.desc()}, {bad.desc()}, {float_value(1)}) == LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("copy_", {o.desc(), bad.desc()}, {o.desc()}) == LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("sum", {bad.desc()}, {bad.desc()}, {int_list_value({})}) == LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("matmul", {bad.desc(), bad.desc()}, {bad.desc()}) != LOOM_STATUS_OK);
  CHECK(status_of("uniform_", {bad.desc()}, {bad.desc()},
                  {float_value(0), float_value(1), int_list_value({1, 0})}) == LOOM_STATUS_UNSUPPORTED);

  Tensor i = make(LOOM_DTYPE_INT32, {4});
  CHECK(status_of("exp", {i.desc()}, {i.desc()}) == LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("div", {i.desc(), i.desc()}, {i.desc()}) == LOOM_STATUS_UNSUPPORTED);
  Tensor bl = make(LOOM_DTYPE_BOOL, {2, 2});
  CHECK(status_of("neg", {bl.desc()}, {bl.desc()}) == LOOM_STATUS_UNSUPPORTED);
  CHECK(status_of("matmul", {bl.desc(), bl.desc()}, {bl.desc()}) == LOOM_STATUS_UNSUPPORTED);
  // Mixed dtypes, wrong arity, wrong shapes, missing values.
  CHECK(status_of("add", {a.desc(), i.desc()}, {o.desc()}, {int_value(1)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("add", {a.desc()}, {o.desc()}, {int_value(1)}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("add", {a.desc(), b.desc()}, {o.desc()}) == LOOM_STATUS_INVALID_ARGUMENT);
  Tensor five = make(LOOM_DTYPE_FLOAT32, {5});
  CHECK(status_of("mul", {a.desc(), five.desc()}, {o.desc()}) == LOOM_STATUS_INVALID_ARGUMENT);
  Tensor m23 = make(LOOM_DTYPE_FLOAT32, {2, 3}), m43 = make(LOOM_DTYPE_FLOAT32, {4, 3}),
         m22 = make(LOOM_DTYPE_FLOAT32, {2, 2});
  CHECK(status_of("matmul", {m23.desc(), m43.desc()}, {m22.desc()}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("uniform_", {a.desc()}, {a.desc()}, {float_value(0), float_value(1)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("sum", {m23.desc()}, {m23.desc()}, {int_list_value({5})}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
}
