// A device written as a new backend author writes one: functional kernels
// only (add for float32, any strides; sum over all dims only), no in-place
// forms, no copy_. Checks that in-place calls reach the functional kernels
// natively, and that the fallback's messages say why the device's own code
// did not run: no kernel, no kernel for the dtype, or a kernel that declined.
#include <catch2/catch.hpp>
#include <loom/dispatch_trace.h>
#include <loom/loom.h>
#include <loom/plugin.hpp>
#include <loom/plugin/strided.hpp>
#include <loom/plugin_host.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

using loom::plugin::Failure;

namespace {

int32_t one_device(void*) { return 1; }
LoomError* fk_alloc(void*, int32_t, size_t n, void** out) {
  *out = std::malloc(n ? n : 1);
  return nullptr;
}
void fk_free(void*, int32_t, void* p, size_t) { std::free(p); }
LoomError* fk_copy(void*, int32_t, void* dst, const void* src, size_t n, void*) {
  std::memcpy(dst, src, n);
  return nullptr;
}

template <class T>
T* at(const LoomTensorDesc& d) {
  return reinterpret_cast<T*>(static_cast<char*>(d.data) + d.byte_offset);
}

int add_runs = 0;
// out = self + alpha * other for float32, any strides (outputs[0] may be
// inputs[0]: the in-place form).
void add_f32(const LoomKernelCall& c) {
  ++add_runs;
  const LoomTensorDesc &out = c.outputs[0], &a = c.inputs[0], &b = c.inputs[1];
  const float alpha = static_cast<float>(loom::plugin::value_float(c, 0));
  loom::plugin::StridedIter<3> it;
  const int64_t* strides[3] = {out.strides, a.strides, b.strides};
  it.init(out.ndim, out.shape, strides);
  float *po = at<float>(out);
  const float *pa = at<const float>(a), *pb = at<const float>(b);
  it.for_each_run(0, it.numel, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      po[off[0] + i * it.inner_stride(0)] = pa[off[1] + i * it.inner_stride(1)] + alpha * pb[off[2] + i * it.inner_stride(2)];
  });
}

// A kernel that takes only part of its op's calls.
void sum_all_f32(const LoomKernelCall& c) {
  const LoomValue& dims = c.values[0];
  if (dims.u.ints.size != c.inputs[0].ndim) throw Failure(LOOM_STATUS_UNSUPPORTED, "sums over all dims only");
  throw Failure(LOOM_STATUS_UNSUPPORTED, "never reached in these tests");
}

LoomError* fk_init(const LoomHostApi* api) {
  return loom::plugin::guard([&] {
    loom::plugin::Registrar r(api);
    static const LoomDeviceTypeDesc desc = [] {
      LoomDeviceTypeDesc d{};
      d.struct_size = sizeof d;
      d.name = "fktest";
      d.device_count = one_device;
      d.allocate = fk_alloc;
      d.deallocate = fk_free;
      d.copy_to_host = fk_copy;
      d.copy_from_host = fk_copy;
      return d;
    }();
    r.device_type(desc);
    r.kernel("add", "fktest", loom::plugin::kernel<add_f32>, LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32));
    r.kernel("sum", "fktest", loom::plugin::kernel<sum_all_f32>, LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32));
  });
}

loom::Device fktest() {
  static const LoomPluginInfo info{sizeof(LoomPluginInfo), LOOM_ABI_MAJOR, LOOM_ABI_MINOR, "fktest", "1.0", fk_init};
  static const bool ok = [] {
    auto r = loom::register_plugin(&info, "in-process fktest");
    INFO(r.error);
    REQUIRE(r.ok);
    return true;
  }();
  (void)ok;
  return loom::Device("fktest");
}

struct PolicyGuard {
  loom::FallbackPolicy saved = loom::fallback_policy();
  explicit PolicyGuard(loom::FallbackPolicy p) { loom::set_fallback_policy(p); }
  ~PolicyGuard() { loom::set_fallback_policy(saved); }
};

// What `f` wrote to std::cerr.
template <class F>
std::string cerr_of(F&& f) {
  std::ostringstream captured;
  std::streambuf* saved = std::cerr.rdbuf(captured.rdbuf());
  try {
    f();
  } catch (...) {
    std::cerr.rdbuf(saved);
    throw;
  }
  std::cerr.rdbuf(saved);
  return captured.str();
}

bool ran_natively(const loom::DispatchTrace& trace, int slot) { return !trace.fell_back_on(slot); }

}  // namespace

TEST_CASE("an in-place op runs its functional form's kernel where the device has no in-place kernel") {
  const loom::Device dev = fktest();
  auto self = loom::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).to(dev);
  auto other = loom::from_vector<float>({10, 20, 30}, {3}).to(dev);
  const int before = add_runs;
  const auto fallbacks = loom::fallback_count("add_", "fktest");
  {
    loom::DispatchTrace trace;
    self.add_(other, 2.0);
    CHECK(ran_natively(trace, dev.type));
  }
  CHECK(add_runs == before + 1);
  CHECK(loom::fallback_count("add_", "fktest") == fallbacks);
  CHECK(self.cpu().to_vector<float>() == std::vector<float>{21, 42, 63, 24, 45, 66});

  // A transposed self: the kernel gets self's own strides as the output.
  auto t = loom::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).to(dev).t();
  t.add_(loom::ones({3, 2}).to(dev));
  CHECK(t.cpu().contiguous().to_vector<float>() == std::vector<float>{2, 5, 3, 6, 4, 7});
  CHECK(add_runs == before + 2);

  // out= with a non-contiguous out tensor: the kernel writes it in place.
  auto out = loom::zeros({3, 2}).to(dev).t();
  loom::DispatchTrace trace;
  loom::add_out(out, loom::ones({2, 3}).to(dev), loom::ones({2, 3}).to(dev));
  CHECK(ran_natively(trace, dev.type));
  CHECK(out.cpu().contiguous().to_vector<float>() == std::vector<float>(6, 2.0f));
}

TEST_CASE("a dtype the kernel does not take is named with the dtypes it does take") {
  const loom::Device dev = fktest();
  auto h = loom::ones({4}, loom::DType::Float16).to(dev);
  PolicyGuard warn(loom::FallbackPolicy::Warn);
  const std::string said = cerr_of([&] { CHECK((h + h).cpu().to(loom::DType::Float32).sum().item<float>() == 8); });
  CHECK_THAT(said, Catch::Contains("op 'add' has a kernel on device 'fktest' for float32 but not for dtype float16") &&
                       Catch::Contains("running it on the CPU"));
  // In place: neither kernel takes float16, so add_'s composite runs, and
  // its add is what falls back.
  PolicyGuard error(loom::FallbackPolicy::Error);
  CHECK_THROWS_WITH(h.add_(h), Catch::Contains("op 'add' has a kernel on device 'fktest' for float32 but not for dtype float16") &&
                                   Catch::Contains("LOOM_FALLBACK=error"));
  // An op with no kernel at all says just that.
  CHECK_THROWS_WITH(h.neg(), Catch::Contains("op 'neg' has no kernel on device 'fktest'"));
}

TEST_CASE("a kernel that declines is reported with its reason, not as missing") {
  const loom::Device dev = fktest();
  auto x = loom::ones({2, 3}).to(dev);
  {
    PolicyGuard error(loom::FallbackPolicy::Error);
    try {
      x.sum(std::vector<int64_t>{0});
      FAIL("expected LOOM_FALLBACK=error to refuse the fallback");
    } catch (const loom::Error& e) {
      CHECK(e.kind() == loom::ErrorKind::Unsupported);
      CHECK_THAT(e.what(), Catch::Contains("the kernel for op 'sum' on device 'fktest'") &&
                               Catch::Contains("functional_kernels_test.cpp") &&
                               Catch::Contains("declined this float32 call: sums over all dims only") &&
                               !Catch::Contains("has no kernel"));
    }
  }
  PolicyGuard warn(loom::FallbackPolicy::Warn);
  const std::string said = cerr_of([&] { CHECK(x.sum(std::vector<int64_t>{1}).cpu().to_vector<float>() == std::vector<float>{3, 3}); });
  CHECK_THAT(said, Catch::Contains("declined this float32 call: sums over all dims only"));
}
