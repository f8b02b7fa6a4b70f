// loom/autocast.h — mixed precision: while autocast is on for a device type,
// ops on that device type cast their floating inputs by PyTorch's per-op
// policy (torch.autocast):
//
//   lower precision  matmul, linear, conv, bmm, addmm, attention ... run in the
//                    autocast dtype (float32 / 16-bit inputs are cast; float64
//                    stays)
//   float32          reductions, losses, softmax, norms, exp / log / pow ...
//                    run in float32 (16-bit inputs are cast up)
//   promote          cat, stack, addcmul, atan2, dot ... run in the widest
//                    floating dtype among their inputs
//   refused          binary_cross_entropy (unsafe in 16 bits: use
//                    binary_cross_entropy_with_logits), as PyTorch refuses it
//
// The casts are ops of their own, so autograd differentiates through them and
// parameters get float32 gradients. It happens in the dispatcher, before
// autograd, so it works on every device type, a plugin's included. The state
// is per thread; backward runs with autocast off.
//
//   { loom::autocast::AutocastGuard on("cuda", DType::BFloat16); y = model(x); }
#pragma once

#include <loom/dtype.h>

#include <optional>
#include <string>
#include <string_view>

namespace loom::autocast {

enum class Policy { None, LowerPrecision, Float32, Promote, Refused };

// The policy of the catalog op named `op` ("matmul", "softmax" ...).
Policy policy(std::string_view op);

// Per thread, per device type ("cuda", "cpu", a plugin's). The default dtype
// is float16 for cuda and hip, bfloat16 for every other device type.
bool is_enabled(const std::string& device_type);
void set_enabled(const std::string& device_type, bool enabled);
DType dtype(const std::string& device_type);
// Only float16 and bfloat16 (and float32, which makes lower-precision ops a no-op).
void set_dtype(const std::string& device_type, DType dtype);

// Turns autocast on (or off, enabled = false) for one device type over a
// scope, with `dtype` or the device type's current one; restores both after.
class AutocastGuard {
 public:
  explicit AutocastGuard(std::string device_type, std::optional<DType> dtype = std::nullopt, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  std::string type_;
  bool prev_enabled_;
  DType prev_dtype_;
};

// Suspends autocast on every device type for a scope (the autograd engine
// runs backward under one).
class SuspendGuard {
 public:
  SuspendGuard();
  ~SuspendGuard();
  SuspendGuard(const SuspendGuard&) = delete;
  SuspendGuard& operator=(const SuspendGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace loom::autocast
