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
#include <loom/plugin.hpp>

#include <cstdlib>
#include <cstring>

#define REGTEST_OK 0
#define REGTEST_NO_DEVICES 1
#define REGTEST_INIT_FAILS 2
#define REGTEST_BAD_ABI 3
#define REGTEST_NEWER_MINOR 4

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

// A table from a newer minor: today's fields plus one appended slot this
// host has never heard of. The host must copy only what it knows.
struct NewerDeviceTypeDesc {
  LoomDeviceTypeDesc known;
  void* future_slot;
};

[[maybe_unused]] void init(loom::plugin::Registrar& r) {
  static NewerDeviceTypeDesc newer{};
  LoomDeviceTypeDesc& d = newer.known;
  d.struct_size = REGTEST_MODE == REGTEST_NEWER_MINOR ? sizeof newer : sizeof d;
  newer.future_slot = reinterpret_cast<void*>(0x10);  // poison: never to be called
  d.name = REGTEST_DEVICE_TYPE;
  d.flags = LOOM_DEVICE_HOST_MEMORY;
  d.device_count = &device_count;
  d.unavailable_reason = &unavailable_reason;
  d.allocate = &allocate;
  d.deallocate = &deallocate;
  d.copy_to_host = &copy;
  d.copy_from_host = &copy;
  r.device_type(d);
  if (REGTEST_MODE == REGTEST_INIT_FAILS)
    throw loom::plugin::Failure(LOOM_STATUS_DEVICE_ERROR,
                                "regtest: deliberate init failure after registering a device type");
  r.def(REGTEST_DEVICE_TYPE "_identity(Tensor self) -> Tensor");
  r.kernel(REGTEST_DEVICE_TYPE "_identity", REGTEST_DEVICE_TYPE,
           &loom::plugin::kernel<&identity>, 0, LOOM_KERNEL_CONTIGUOUS_ONLY);
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
#else
LOOM_PLUGIN(REGTEST_NAME, "0.0.1-regtest", init)
#endif
