// transfer.cpp — moving bytes between devices, and the conversions built on
// it: to(device), to(dtype), contiguous, clone, item, to_vector, from_vector.
#include "autograd/nodes.h"
#include "current_stream.h"
#include "device_registry.h"
#include "plugin_call.h"
#include "pinned_memory.h"
#include "transfer.h"
#include "core_op.h"
#include "view_ops.h"

#include <loom/error.h>
#include <loom/ops.h>
#include <loom/plugin.hpp>

#include <cstring>

namespace loom {
namespace detail {

Span storage_span(const TensorImpl& t) {
  Span s{t.storage_offset(), t.storage_offset()};
  if (t.numel() == 0) return {t.storage_offset(), t.storage_offset() - 1};
  for (size_t i = 0; i < t.sizes().size(); ++i) s.last += (t.sizes()[i] - 1) * t.strides()[i];
  return s;
}

namespace {
// Waits for `stream` (a plugin handle, non-null) on `d`: a host<->device copy
// on a stream may be asynchronous, and host memory is read or freed as soon
// as copy_bytes returns (PyTorch's non_blocking=False).
void finish_stream_copy(const DeviceTypeEntry& e, Device d, void* stream) {
  if (!e.desc.stream_synchronize) return;
  if (LoomError* err = LOOM_DEVICE_SLOT(e, stream_synchronize, d.index, stream))
    throw_abi_error(err, cat("waiting for a copy on a stream of ", d.str()));
}

// After a host<->device copy on `stream` (null: the default stream). A copy
// of pinned memory may still be queued even on the default stream (the ABI
// 1.3 copy contract), so it is waited for unless the caller asked not to;
// any other copy on the default stream was complete when the plugin
// returned.
void finish_host_copy(const DeviceTypeEntry& e, Device d, void* stream, const void* host_ptr,
                      bool non_blocking) {
  if (pinned_owner(host_ptr) != e.slot) {
    if (stream) finish_stream_copy(e, d, stream);
    return;
  }
  if (non_blocking) return;
  if (stream) {
    finish_stream_copy(e, d, stream);
  } else if (e.desc.synchronize) {
    if (LoomError* err = LOOM_DEVICE_SLOT(e, synchronize, d.index))
      throw_abi_error(err, cat("waiting for a copy of pinned memory on ", d.str()));
  }
}
}  // namespace

void copy_bytes(Device dst_dev, void* dst, Device src_dev, const void* src, size_t nbytes,
                bool non_blocking) {
  if (nbytes == 0) return;
  const auto& d = device_type(dst_dev.type);
  const auto& s = device_type(src_dev.type);
  LoomError* err = nullptr;
  // Copies run on this thread's current stream of the device involved.
  if (s.host_memory() && d.host_memory()) {
    std::memcpy(dst, src, nbytes);
  } else if (s.host_memory()) {
    void* stream = current_stream_handle(dst_dev);
    err = LOOM_DEVICE_SLOT(d, copy_from_host, dst_dev.index, dst, src, nbytes, stream);
    if (!err) finish_host_copy(d, dst_dev, stream, src, non_blocking);
  } else if (d.host_memory()) {
    void* stream = current_stream_handle(src_dev);
    err = LOOM_DEVICE_SLOT(s, copy_to_host, src_dev.index, dst, src, nbytes, stream);
    if (!err) finish_host_copy(s, src_dev, stream, dst, non_blocking);
  } else if (&d == &s && d.desc.copy_on_device) {
    // On the source's current stream, as PyTorch does. Between two devices
    // the destination's stream is not ordered with it: wait for its pending
    // work before, and for the copy after.
    void* stream = current_stream_handle(src_dev);
    void* dst_stream = current_stream_handle(dst_dev);
    const bool cross = dst_dev.index != src_dev.index;
    if (cross && dst_stream) finish_stream_copy(d, dst_dev, dst_stream);
    err = LOOM_DEVICE_SLOT(d, copy_on_device, dst_dev.index, dst, src_dev.index, src, nbytes,
                                stream);
    if (!err && cross && stream) finish_stream_copy(s, src_dev, stream);
  } else {  // stage through host memory
    Storage host = allocate_storage(cpu_device(), nbytes);
    copy_bytes(cpu_device(), host->data(), src_dev, src, nbytes);
    copy_bytes(dst_dev, dst, cpu_device(), host->data(), nbytes);
  }
  if (err) throw_abi_error(err, cat("copying ", nbytes, " bytes from ", src_dev.str(), " to ", dst_dev.str()));
}

Tensor span_copy(const TensorImpl& t, Device to) {
  const Span span = storage_span(t);
  const size_t isz = itemsize(t.dtype());
  const size_t nbytes = span.empty() ? 0 : static_cast<size_t>(span.last - span.first + 1) * isz;
  Storage storage = allocate_storage(to, nbytes);
  if (nbytes)
    copy_bytes(to, storage->data(), t.device(),
               static_cast<const char*>(t.storage()->data()) + span.first * isz, nbytes);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), t.dtype(), t.sizes(), t.strides(),
                                           t.storage_offset() - (span.empty() ? t.storage_offset() : span.first)));
}

void span_write_back(const Tensor& from, const TensorImpl& to) {
  const Span span = storage_span(to);
  if (span.empty()) return;
  const size_t isz = itemsize(to.dtype());
  copy_bytes(to.device(), static_cast<char*>(to.storage()->data()) + span.first * isz,
             from.device(), from.storage()->data(),
             static_cast<size_t>(span.last - span.first + 1) * isz);
}

}  // namespace detail

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("contiguous", *this, {});
  detail::CopyNodeName node_name("CloneBackward0");
  Tensor out = empty(sizes(), dtype(), device());
  out.copy_(*this);
  return out;
}

Tensor Tensor::clone() const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("clone", *this, {});
  detail::CopyNodeName node_name("CloneBackward0");
  Tensor out = empty(sizes(), dtype(), device());
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(DType t) const {
  if (t == dtype()) return *this;
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("_to_copy", *this, {detail::dtype_value(t), detail::none_value()});
  detail::CopyNodeName node_name("ToCopyBackward0");
  Tensor out = empty(sizes(), t, device());
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(Device d, bool non_blocking) const {
  if (d == device()) return *this;
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("_to_copy", *this, {detail::none_value(), detail::device_value(d)});
  Tensor src = contiguous();
  Tensor out;
  const auto& from_type = detail::device_type(src.device().type);
  if (non_blocking && d.is_host() && !from_type.host_memory() && from_type.desc.host_allocate) {
    // torch's rule: a non-blocking copy to the host lands in pinned memory,
    // the only host memory the device can write asynchronously.
    out = Tensor(detail::make_intrusive<TensorImpl>(detail::allocate_pinned_storage(from_type.slot, src.nbytes()),
                                                    dtype(), sizes(), contiguous_strides(sizes()), 0));
  } else {
    out = empty(sizes(), dtype(), d);
  }
  detail::copy_bytes(d, out.data_ptr(), src.device(), src.data_ptr(), src.nbytes(), non_blocking);
  const Device from = device();
  autograd::detail::record_function("ToCopyBackward0", {*this}, {out},
                                    [from](const std::vector<Tensor>& g) -> std::vector<Tensor> {
                                      return {g[0].defined() ? g[0].to(from) : Tensor()};
                                    });
  return out;
}

Tensor Tensor::to(Device d, DType t) const { return to(t).to(d); }
Tensor Tensor::cpu() const { return to(cpu_device()); }

Tensor Tensor::pin_memory(std::string_view device_type) const {
  LOOM_CHECK(device().is_host(), "pin_memory: only tensors in host memory can be pinned, got one on ",
             device().str());
  const int slot = device_type_slot(device_type);
  if (detail::pinned_owner(data_ptr()) == slot) return *this;
  Tensor src = contiguous();
  Tensor out(detail::make_intrusive<TensorImpl>(detail::allocate_pinned_storage(slot, src.nbytes()), dtype(),
                                                sizes(), contiguous_strides(sizes()), 0));
  if (src.nbytes()) std::memcpy(out.data_ptr(), src.data_ptr(), src.nbytes());
  return out;
}

bool Tensor::is_pinned() const {
  return defined() && device().is_host() && detail::pinned_owner(storage()->data()) >= 0;
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  Tensor host = cpu().to(dtype_of<T>()).contiguous();  // cast on the host, not the device
  const T* p = host.data_ptr<T>();
  return std::vector<T>(p, p + host.numel());
}

template <class T>
T Tensor::item() const {
  LOOM_CHECK(numel() == 1, "item(): a tensor with ", numel(),
             " elements cannot be converted to a scalar");
  return to_vector<T>()[0];
}

Scalar Tensor::item() const {
  if (is_floating_point()) return Scalar(item<double>());
  if (dtype() == DType::Bool) return Scalar(item<bool>());
  return Scalar(item<int64_t>());
}

template <class T>
Tensor from_vector(const std::vector<T>& values, IntArrayRef sizes, Device device) {
  const int64_t n = shape_numel(sizes);
  LOOM_CHECK(n == static_cast<int64_t>(values.size()), "from_vector: shape ", shape_str(sizes),
             " needs ", n, " values but ", values.size(), " were given");
  Tensor out = empty(sizes, dtype_of<T>(), device);
  if constexpr (std::is_same_v<T, bool>) {  // vector<bool> is packed
    std::vector<uint8_t> bytes(values.begin(), values.end());
    detail::copy_bytes(device, out.data_ptr(), cpu_device(), bytes.data(), bytes.size());
  } else {
    detail::copy_bytes(device, out.data_ptr(), cpu_device(), values.data(), values.size() * sizeof(T));
  }
  return out;
}

#define LOOM_INSTANTIATE_CONVERSIONS(Name, py, code, dl, bits)                                  \
  template std::vector<plugin::DTypeTraits<code>::type> Tensor::to_vector() const;              \
  template plugin::DTypeTraits<code>::type Tensor::item() const;                                \
  template Tensor from_vector(const std::vector<plugin::DTypeTraits<code>::type>&, IntArrayRef, \
                              Device);
LOOM_DTYPE_LIST(LOOM_INSTANTIATE_CONVERSIONS)
#undef LOOM_INSTANTIATE_CONVERSIONS

}  // namespace loom
