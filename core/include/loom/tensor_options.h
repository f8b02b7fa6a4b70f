// loom/tensor_options.h — TensorOptions, libtorch's bundle of a new tensor's
// dtype, device and requires_grad, and its shorthands:
//
//   loom::zeros({2, 3}, loom::dtype(loom::kFloat).device(loom::kCUDA));
//   loom::ones({4}, loom::requires_grad());
//   loom::empty(n, device);                  // a Device (or DType) alone converts
//   auto y = loom::randn({3}, x.options());  // like x
//
// Unset fields take the factory's defaults (float32 for floating factories,
// the CPU).
#pragma once

#include <loom/device.h>
#include <loom/dtype.h>

#include <optional>

namespace loom {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType t) : dtype_(t) {}       // NOLINT: implicit, as libtorch's
  TensorOptions(Device d) : device_(d) {}     // NOLINT
  TensorOptions(DeviceType t) : device_(Device(t)) {}  // NOLINT
  TensorOptions(const char* device) : device_(Device(device)) {}  // NOLINT

  TensorOptions dtype(DType t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }

  std::optional<DType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }
  DType dtype_or(DType fallback) const { return dtype_.value_or(fallback); }
  Device device_or_cpu() const { return device_ ? *device_ : cpu_device(); }
  bool requires_grad() const { return requires_grad_; }
  bool has_dtype() const { return dtype_.has_value(); }

 private:
  std::optional<DType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
};

inline TensorOptions dtype(DType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace loom
