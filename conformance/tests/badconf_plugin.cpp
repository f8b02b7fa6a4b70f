// badconf_plugin.cpp — a deliberately broken backend for loom-conformance's
// own tests: device type "badconf" on plain host memory whose float32
// kernels misbehave, one way each:
//   add     returns wrong values      -> FAIL_VALUE
//   sum     dies of SIGSEGV           -> CRASH
//   matmul  never returns             -> TIMEOUT
//   cat     returns an error status   -> ERROR
// Everything else reaches it through loom's CPU fallback.
#include <loom/plugin.hpp>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

using loom::plugin::Failure;

int32_t device_count(void*) { return 1; }
const char* unavailable_reason(void*) { return ""; }
LoomError* allocate(void*, int32_t, size_t nbytes, void** out) {
  *out = std::malloc(nbytes ? nbytes : 1);
  return *out ? nullptr : loom::plugin::make_error(LOOM_STATUS_OUT_OF_MEMORY, "badconf: out of memory");
}
void deallocate(void*, int32_t, void* p, size_t) { std::free(p); }
LoomError* copy_in(void*, int32_t, void* dst, const void* src, size_t n, void*) {
  std::memcpy(dst, src, n);
  return nullptr;
}
LoomError* copy_on(void*, int32_t, void* dst, int32_t, const void* src, size_t n, void*) {
  std::memmove(dst, src, n);
  return nullptr;
}

// Writes 42 into every element the output covers: confidently wrong.
void wrong_add(const LoomKernelCall& c) {
  const LoomTensorDesc& out = c.outputs[0];
  if (!loom::plugin::is_contiguous(out)) throw Failure(LOOM_STATUS_UNSUPPORTED, "badconf: contiguous only");
  float* p = reinterpret_cast<float*>(static_cast<char*>(out.data) + out.byte_offset);
  for (int64_t i = 0, n = loom::plugin::numel(out); i < n; ++i) p[i] = 42.0f;
}
void crashing_sum(const LoomKernelCall&) { std::raise(SIGSEGV); }
void hanging_matmul(const LoomKernelCall&) {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(60));
}
void failing_cat(const LoomKernelCall&) {
  throw Failure(LOOM_STATUS_DEVICE_ERROR, "badconf: the device lost its mind");
}

}  // namespace

static void init(loom::plugin::Registrar& r) {
  static LoomDeviceTypeDesc d = [] {
    LoomDeviceTypeDesc x{};
    x.struct_size = sizeof x;
    x.name = "badconf";
    x.device_count = &device_count;
    x.unavailable_reason = &unavailable_reason;
    x.allocate = &allocate;
    x.deallocate = &deallocate;
    x.copy_to_host = &copy_in;
    x.copy_from_host = &copy_in;
    x.copy_on_device = &copy_on;
    return x;
  }();
  r.device_type(d);
  const uint64_t f32 = LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32);
  r.kernel("add", "badconf", loom::plugin::kernel<wrong_add>, f32);
  r.kernel("sum", "badconf", loom::plugin::kernel<crashing_sum>, f32);
  r.kernel("matmul", "badconf", loom::plugin::kernel<hanging_matmul>, f32);
  r.kernel("cat", "badconf", loom::plugin::kernel<failing_cat>, f32);
}

LOOM_PLUGIN("badconf", "0.1.0", init)
