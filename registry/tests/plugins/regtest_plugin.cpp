// A tiny host-memory device plugin for the registry tests. One source, many
// libraries: the build sets REGTEST_NAME / REGTEST_DEVICE_TYPE (unique per
// library, since every test plugin registers into the same process-wide core)
// and REGTEST_MODE:
//   REGTEST_OK          registers its device type (1 device), an op and a kernel
//   REGTEST_NO_DEVICES  same, but reports 0 devices with a reason
//   REGTEST_INIT_FAILS  registers its device type, then init returns an error
//   REGTEST_BAD_ABI     LoomPluginInfo says abi_major = LOOM_ABI_MAJOR + 1
//   REGTEST_NEWER_MINOR as OK, but built "for the next minor": abi_minor is
//                       LOOM_ABI_MINOR + 1 and its LoomPluginInfo and device
//                       table are larger than this host's, with poison in
//                       the fields the host does not know
// Hostile modes (hostile_plugins_test.cpp): plugin code that breaks the
// ABI's rules, which the host must survive with a clear message.
//   REGTEST_THROWING    as OK, plus raw kernels (no plugin::guard) that throw
//                       std::runtime_error, a non-std type and std::bad_alloc,
//                       kernels that return error statuses, and a second
//                       device type "<type>_baddev" whose allocate, copy and
//                       boxed fallback throw
//   REGTEST_UNKNOWN_OP  as OK, then registers a kernel for an op nobody
//                       defined (the host's NOT_FOUND fails its init)
//   REGTEST_UNKNOWN_OP_TOLERATED  the same kernel, but init catches the
//                       NOT_FOUND, logs it and carries on
//   REGTEST_INIT_THROWS / REGTEST_INIT_THROWS_OTHER  an init written without
//                       the guard that throws std::runtime_error / a non-std
//                       type after registering its device type
#include <loom/plugin.hpp>

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#define REGTEST_OK 0
#define REGTEST_NO_DEVICES 1
#define REGTEST_INIT_FAILS 2
#define REGTEST_BAD_ABI 3
#define REGTEST_NEWER_MINOR 4
#define REGTEST_THROWING 5
#define REGTEST_UNKNOWN_OP 6
#define REGTEST_UNKNOWN_OP_TOLERATED 7
#define REGTEST_INIT_THROWS 8
#define REGTEST_INIT_THROWS_OTHER 9

#ifndef REGTEST_MODE
#define REGTEST_MODE REGTEST_OK
#endif

namespace {

int32_t device_count(void*) { return REGTEST_MODE == REGTEST_NO_DEVICES ? 0 : 1; }
const char* unavailable_reason(void*) { return "regtest: no hardware present"; }

LoomError* allocate(void*, int32_t, size_t nbytes, void** out) {
  *out = nbytes ? std::malloc(nbytes) : nullptr;
  if (nbytes && !*out)
    return loom::plugin::make_error(LOOM_STATUS_OUT_OF_MEMORY, "regtest: malloc failed");
  return nullptr;
}
void deallocate(void*, int32_t, void* p, size_t) { std::free(p); }
LoomError* copy(void*, int32_t, void* dst, const void* src, size_t n, void*) {
  if (n) std::memcpy(dst, src, n);
  return nullptr;
}

// out = self
void identity(const LoomKernelCall& call) {
  const auto& in = call.inputs[0];
  const auto& out = call.outputs[0];
  size_t n = static_cast<size_t>(loom::plugin::numel(in)) * loom::plugin::dtype_itemsize(in.dtype);
  if (n) std::memcpy(loom::plugin::data_ptr<char>(out), loom::plugin::data_ptr<const char>(in), n);
}

// A one-device type whose memory is host memory (malloc, memcpy).
LoomDeviceTypeDesc host_memory_desc(const char* name, size_t struct_size) {
  LoomDeviceTypeDesc d{};
  d.struct_size = struct_size;
  d.name = name;
  d.flags = LOOM_DEVICE_HOST_MEMORY;
  d.device_count = &device_count;
  d.unavailable_reason = &unavailable_reason;
  d.allocate = &allocate;
  d.deallocate = &deallocate;
  d.copy_to_host = &copy;
  d.copy_from_host = &copy;
  return d;
}

// Not derived from std::exception: the host can only name its type.
struct RegtestOddity {
  int code;
};

// Raw kernels: LoomKernelFn written by hand, without plugin::kernel<>'s
// guard, so their exceptions reach the host.
LoomError* throw_std(const LoomKernelCall*) { throw std::runtime_error("regtest: kernel threw on purpose"); }
LoomError* throw_other(const LoomKernelCall*) { throw RegtestOddity{42}; }
LoomError* throw_bad_alloc(const LoomKernelCall*) { throw std::bad_alloc(); }
LoomError* error_status(const LoomKernelCall*) {
  return loom::plugin::make_error(LOOM_STATUS_DEVICE_ERROR, "regtest: the device is on fire");
}
LoomError* oom_status(const LoomKernelCall*) {
  return loom::plugin::make_error(LOOM_STATUS_OUT_OF_MEMORY, "regtest: 123456789 bytes do not fit");
}

// "<type>_baddev": blocks under 1 KiB work; 1 KiB .. 1 MiB make allocate
// throw std::runtime_error, larger ones std::bad_alloc. A copy of exactly 4
// bytes from the host throws a non-std type. Every op falls back to a boxed
// fallback that throws.
LoomError* baddev_allocate(void* ctx, int32_t index, size_t nbytes, void** out) {
  if (nbytes >= (1u << 20)) throw std::bad_alloc();
  if (nbytes >= 1024) throw std::runtime_error("regtest: allocate threw on purpose");
  return allocate(ctx, index, nbytes, out);
}
LoomError* baddev_copy_from_host(void* ctx, int32_t index, void* dst, const void* src, size_t n,
                                 void* stream) {
  if (n == 4) throw RegtestOddity{4};
  return copy(ctx, index, dst, src, n, stream);
}
LoomError* baddev_fallback(const LoomKernelCall*) { throw std::logic_error("regtest: fallback threw"); }

[[maybe_unused]] void register_throwing(loom::plugin::Registrar& r) {
  struct Op {
    const char* schema;
    const char* name;
    LoomKernelFn fn;
  };
#define REGTEST_OP(suffix, fn) \
  {REGTEST_DEVICE_TYPE "_" #suffix "(Tensor self) -> Tensor", REGTEST_DEVICE_TYPE "_" #suffix, &fn}
  static const Op ops[] = {REGTEST_OP(throw_std, throw_std), REGTEST_OP(throw_other, throw_other),
                           REGTEST_OP(throw_bad_alloc, throw_bad_alloc),
                           REGTEST_OP(error_status, error_status), REGTEST_OP(oom_status, oom_status)};
#undef REGTEST_OP
  for (const Op& op : ops) {
    r.def(op.schema);
    r.kernel(op.name, REGTEST_DEVICE_TYPE, op.fn);
  }
  static LoomDeviceTypeDesc bad = [] {
    LoomDeviceTypeDesc d = host_memory_desc(REGTEST_DEVICE_TYPE "_baddev", sizeof d);
    d.flags = 0;  // not host memory: ops on it use its boxed fallback
    d.allocate = &baddev_allocate;
    d.copy_from_host = &baddev_copy_from_host;
    return d;
  }();
  r.device_type(bad);
  r.fallback(REGTEST_DEVICE_TYPE "_baddev", &baddev_fallback);
}

// A table from a newer minor: today's fields plus one appended slot this
// host has never heard of. The host must copy only what it knows.
struct NewerDeviceTypeDesc {
  LoomDeviceTypeDesc known;
  void* future_slot;
};

[[maybe_unused]] void init(loom::plugin::Registrar& r) {
  static NewerDeviceTypeDesc newer{};
  LoomDeviceTypeDesc& d = newer.known;
  d = host_memory_desc(REGTEST_DEVICE_TYPE,
                       REGTEST_MODE == REGTEST_NEWER_MINOR ? sizeof newer : sizeof d);
  newer.future_slot = reinterpret_cast<void*>(0x10);  // poison: never to be called
  r.device_type(d);
  if (REGTEST_MODE == REGTEST_INIT_FAILS)
    throw loom::plugin::Failure(LOOM_STATUS_DEVICE_ERROR,
                                "regtest: deliberate init failure after registering a device type");
  r.def(REGTEST_DEVICE_TYPE "_identity(Tensor self) -> Tensor");
  r.kernel(REGTEST_DEVICE_TYPE "_identity", REGTEST_DEVICE_TYPE,
           &loom::plugin::kernel<&identity>, 0, LOOM_KERNEL_CONTIGUOUS_ONLY);
#if REGTEST_MODE == REGTEST_THROWING
  register_throwing(r);
#elif REGTEST_MODE == REGTEST_UNKNOWN_OP
  r.kernel("regtest_no_such_op", REGTEST_DEVICE_TYPE, &loom::plugin::kernel<&identity>);
#elif REGTEST_MODE == REGTEST_UNKNOWN_OP_TOLERATED
  // The status comes back to the plugin, so it may choose to go on without
  // the kernel (an op of a newer loom, say).
  try {
    r.kernel("regtest_no_such_op", REGTEST_DEVICE_TYPE, &loom::plugin::kernel<&identity>);
  } catch (const loom::plugin::Failure& f) {
    if (f.code() != LOOM_STATUS_NOT_FOUND) throw;
    r.log(LOOM_LOG_INFO, std::string("skipping a kernel: ") + f.what());
  }
#endif
}

}  // namespace

#if REGTEST_MODE == REGTEST_BAD_ABI
static LoomError* bad_abi_init(const LoomHostApi*) noexcept {
  // Must never run: the host refuses the plugin before init.
  std::abort();
}
extern "C" LOOM_PLUGIN_EXPORT const LoomPluginInfo* loom_plugin_entry(void) {
  static const LoomPluginInfo info = {sizeof(LoomPluginInfo), LOOM_ABI_MAJOR + 1, 0,
                                      REGTEST_NAME, "0.0.1-regtest", &bad_abi_init};
  return &info;
}
#elif REGTEST_MODE == REGTEST_NEWER_MINOR
static LoomError* newer_minor_init(const LoomHostApi* api) noexcept {
  return loom::plugin::guard([&] {
    loom::plugin::Registrar registrar(api);
    init(registrar);
  });
}
// LoomPluginInfo of the next minor: one appended field, poisoned.
struct NewerPluginInfo {
  LoomPluginInfo known;
  void* future_field;
};
extern "C" LOOM_PLUGIN_EXPORT const LoomPluginInfo* loom_plugin_entry(void) {
  static const NewerPluginInfo info = {
      {sizeof(NewerPluginInfo), LOOM_ABI_MAJOR, LOOM_ABI_MINOR + 1, REGTEST_NAME, "0.0.1-regtest",
       &newer_minor_init},
      reinterpret_cast<void*>(0x20)};
  return &info.known;
}
#elif REGTEST_MODE == REGTEST_INIT_THROWS || REGTEST_MODE == REGTEST_INIT_THROWS_OTHER
// No guard and not noexcept: the exception leaves the plugin.
static LoomError* raw_init(const LoomHostApi* api) {
  loom::plugin::Registrar registrar(api);
  init(registrar);
  if (REGTEST_MODE == REGTEST_INIT_THROWS) throw std::runtime_error("regtest: init threw on purpose");
  throw RegtestOddity{9};
}
extern "C" LOOM_PLUGIN_EXPORT const LoomPluginInfo* loom_plugin_entry(void) {
  static const LoomPluginInfo info = {sizeof(LoomPluginInfo), LOOM_ABI_MAJOR, LOOM_ABI_MINOR,
                                      REGTEST_NAME, "0.0.1-regtest", &raw_init};
  return &info;
}
#else
LOOM_PLUGIN(REGTEST_NAME, "0.0.1-regtest", init)
#endif
