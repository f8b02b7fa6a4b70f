// fallback.h (core-internal) — running an op on a device that has no kernel
// for it (fallback.cpp).
#pragma once

#include <loom/op_call.h>

#include <string>

namespace loom::detail {

// Why a call did not run on the device's own code: the op has no kernel
// there, its kernel does not take the call's dtype, or the kernel declined
// the call (returned UNSUPPORTED). Built only on the way to a fallback or an
// error, for their messages; a vendor reads it to know what to fix.
struct NativeMiss {
  enum Kind { None, NoKernel, NoDtype, Declined };
  Kind kind = None;
  const OpDef* kernel_op = nullptr;  // NoDtype, Declined: the op whose kernel it was
  std::string dtypes;                // NoDtype: the dtypes that kernel takes, named
  std::string provider;              // Declined: "plugin 'x', registered at f.cpp:12"
  std::string reason;                // Declined: the kernel's own message

  // NoKernel or NoDtype, read from the kernel tables (the in-place op's own
  // kernel, else its functional form's).
  static NativeMiss of(const OpCall& call);
  static NativeMiss declined(const KernelEntry& entry, const OpDef& op, std::string reason);
  // "op 'add' on device 'vecdev' has a kernel for float32 but not for dtype
  // float16", "the kernel for op 'sum' on 'vecdev' (plugin ...) declined
  // this call: <reason>", ...
  std::string describe(const OpCall& call) const;
};

// Applies the fallback policy (LOOM_FALLBACK: error throws naming the op,
// device, dtype and `why`; warn prints `why` once per op, device, dtype and
// kind of miss), counts the fallback, then runs `boxed` (the device's boxed
// fallback) when given, else the CPU fallback.
void run_fallback(OpCall& call, const KernelEntry* boxed, const NativeMiss& why);

// A call on the host device with neither a kernel, a composite nor a
// fallback: throws loom::Error (NotFound, or Unsupported when a kernel
// declined) with `why` and the device types that do have kernels.
[[noreturn]] void throw_no_native(const OpCall& call, const NativeMiss& why);

}  // namespace loom::detail
