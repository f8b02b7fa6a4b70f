// Test scaffolding for the CPU kernels: a fake host table that records what
// the plugin registers, host-side tensors with views (transpose, slice,
// expand), kernel calls by op name, and element access as long double.
#pragma once

#include <loom/plugin.hpp>
#include <loom/plugin/half.hpp>
#include <loom/plugin_api.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

extern "C" const LoomPluginInfo* loom_plugin_entry(void);

namespace loom_test {

// ------------------------------------------------------------ fake host ---

struct FakeHost {
  std::map<std::string, LoomDeviceTypeDesc> devices;
  std::map<std::string, LoomKernelDesc> kernels;  // by op name (device "cpu")
  std::vector<std::string> logs;
};

namespace detail {
inline FakeHost& host_state() {
  static FakeHost h;
  return h;
}
inline LoomError* device_type_register(LoomHost*, const LoomDeviceTypeDesc* d, int32_t* out) {
  auto& h = host_state();
  if (h.devices.count(d->name))
    return loom::plugin::make_error(LOOM_STATUS_INVALID_ARGUMENT, "duplicate device type");
  h.devices[d->name] = *d;
  *out = 0;
  return nullptr;
}
inline LoomError* kernel_register(LoomHost*, const LoomKernelDesc* d) {
  auto& h = host_state();
  if (!h.devices.count(d->device_type))
    return loom::plugin::make_error(LOOM_STATUS_NOT_FOUND,
                                    std::string("unknown device type ") + d->device_type);
  if (h.kernels.count(d->op))
    return loom::plugin::make_error(LOOM_STATUS_INVALID_ARGUMENT,
                                    std::string("kernel registered twice: ") + d->op);
  h.kernels[d->op] = *d;
  return nullptr;
}
inline LoomError* op_def(LoomHost*, const LoomOpDef*) { return nullptr; }
inline LoomError* fallback_register(LoomHost*, const LoomFallbackDesc*) { return nullptr; }
inline const char* op_name(const LoomOp*) { return "test_op"; }
inline void log(LoomHost*, int32_t, const char* m) { host_state().logs.emplace_back(m); }
}  // namespace detail

// The fake host after the plugin's init ran through it (once).
inline const FakeHost& host() {
  static const bool initialised = [] {
    static LoomHostApi api{};
    api.struct_size = sizeof api;
    api.abi_major = LOOM_ABI_MAJOR;
    api.abi_minor = LOOM_ABI_MINOR;
    api.host = nullptr;
    api.device_type_register = &detail::device_type_register;
    api.op_def = &detail::op_def;
    api.kernel_register = &detail::kernel_register;
    api.fallback_register = &detail::fallback_register;
    api.op_name = &detail::op_name;
    api.op_schema = &detail::op_name;
    api.log = &detail::log;
    const LoomPluginInfo* info = loom_plugin_entry();
    REQUIRE(info != nullptr);
    REQUIRE(info->abi_major == LOOM_ABI_MAJOR);
    REQUIRE(std::string(info->name) == "cpu");
    LoomError* e = info->init(&api);
    if (e) {
      FAIL("init failed: " << e->message);
    }
    return true;
  }();
  (void)initialised;
  return detail::host_state();
}

// --------------------------------------------------------------- values ---

inline LoomValue int_value(int64_t v) {
  LoomValue x{};
  x.kind = LOOM_VALUE_INT;
  x.u.i = v;
  return x;
}
inline LoomValue bool_value(bool v) {
  LoomValue x{};
  x.kind = LOOM_VALUE_BOOL;
  x.u.i = v ? 1 : 0;
  return x;
}
inline LoomValue float_value(double v) {
  LoomValue x{};
  x.kind = LOOM_VALUE_FLOAT;
  x.u.f = v;
  return x;
}
// The list must outlive the call: kept in a deque-like static store.
inline LoomValue int_list_value(std::vector<int64_t> v) {
  static std::vector<std::unique_ptr<std::vector<int64_t>>> keep;
  keep.push_back(std::make_unique<std::vector<int64_t>>(std::move(v)));
  LoomValue x{};
  x.kind = LOOM_VALUE_INT_LIST;
  x.u.ints.data = keep.back()->data();
  x.u.ints.size = static_cast<int64_t>(keep.back()->size());
  return x;
}

// -------------------------------------------------------------- tensors ---

// A view onto shared host storage. Shape/strides in elements.
struct Tensor {
  std::shared_ptr<std::vector<uint64_t>> store;  // 8-byte aligned bytes
  int32_t dtype = LOOM_DTYPE_FLOAT32;
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;  // elements from the storage start

  size_t itemsize() const { return loom::plugin::dtype_itemsize(dtype); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
  int32_t ndim() const { return static_cast<int32_t>(shape.size()); }
  LoomTensorDesc desc() const {
    LoomTensorDesc d{};
    d.struct_size = sizeof d;
    d.data = store->empty() ? nullptr : store->data();
    d.device = LoomDevice{0, 0};
    d.ndim = ndim();
    d.dtype = dtype;
    d.shape = shape.data();
    d.strides = strides.data();
    d.byte_offset = static_cast<uint64_t>(offset) * itemsize();
    return d;
  }
  char* element(const std::vector<int64_t>& idx) const {
    int64_t off = offset;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    return reinterpret_cast<char*>(store->data()) + off * static_cast<int64_t>(itemsize());
  }
};

inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = acc;
    acc *= shape[d];
  }
  return s;
}

inline Tensor make(int32_t dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.strides = contiguous_strides(t.shape);
  const size_t bytes = static_cast<size_t>(t.numel()) * t.itemsize();
  t.store = std::make_shared<std::vector<uint64_t>>((bytes + 7) / 8);
  return t;
}

inline Tensor transpose(Tensor t, int a, int b) {
  std::swap(t.shape[static_cast<size_t>(a)], t.shape[static_cast<size_t>(b)]);
  std::swap(t.strides[static_cast<size_t>(a)], t.strides[static_cast<size_t>(b)]);
  return t;
}

inline Tensor slice(Tensor t, int dim, int64_t start, int64_t len, int64_t step = 1) {
  t.offset += start * t.strides[static_cast<size_t>(dim)];
  t.shape[static_cast<size_t>(dim)] = len;
  t.strides[static_cast<size_t>(dim)] *= step;
  return t;
}

// Broadcast size-1 dims (same ndim) to `shape` with stride 0.
inline Tensor expand(Tensor t, const std::vector<int64_t>& shape) {
  for (size_t d = 0; d < shape.size(); ++d) {
    if (t.shape[d] != shape[d]) {
      REQUIRE(t.shape[d] == 1);
      t.shape[d] = shape[d];
      t.strides[d] = 0;
    }
  }
  return t;
}

// Calls f(idx) for every multi-index of `shape`, row-major.
inline void for_each_index(const std::vector<int64_t>& shape,
                           const std::function<void(const std::vector<int64_t>&)>& f) {
  for (int64_t s : shape)
    if (s == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  for (;;) {
    f(idx);
    size_t d = shape.size();
    for (;;) {
      if (d == 0) return;
      --d;
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// The exact value of an element (long double holds every dtype's values).
inline long double get(const Tensor& t, const std::vector<int64_t>& idx) {
  const char* p = t.element(idx);
  return loom::plugin::visit_dtype(t.dtype, [&](auto tag) -> long double {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::is_same_v<T, loom::plugin::Half> || std::is_same_v<T, loom::plugin::BFloat16>)
      return static_cast<float>(v);
    else
      return static_cast<long double>(v);
  });
}

// Stores `v`, which the test picks representable (or integral) for t.dtype.
inline void set(const Tensor& t, const std::vector<int64_t>& idx, long double v) {
  char* p = t.element(idx);
  loom::plugin::visit_dtype(t.dtype, [&](auto tag) {
    using T = decltype(tag);
    T x;
    if constexpr (std::is_same_v<T, bool>) x = v != 0;
    else if constexpr (std::is_integral_v<T>) x = static_cast<T>(static_cast<int64_t>(v));
    else if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(v);
    else x = T(static_cast<float>(v));
    std::memcpy(p, &x, sizeof x);
  });
}

// Fills t with a deterministic pattern of small values valid for its dtype.
inline void fill_pattern(const Tensor& t, int seed = 0) {
  int64_t i = 0;
  const bool is_unsigned = t.dtype == LOOM_DTYPE_UINT8;
  const bool is_bool = t.dtype == LOOM_DTYPE_BOOL;
  const bool is_int = t.dtype <= LOOM_DTYPE_INT64;
  for_each_index(t.shape, [&](const std::vector<int64_t>& idx) {
    const int64_t h = (i++ * 7919 + seed * 104729 + 12345) % 1009;
    long double v;
    if (is_bool) v = h % 3 == 0;
    else if (is_unsigned) v = h % 60;
    else if (is_int) v = h % 61 - 30;
    else v = static_cast<long double>(h % 200 - 100) / 16.0L;  // exact in every float type
    set(t, idx, v);
  });
}

// ---------------------------------------------------------------- calls ---

inline LoomError* call(const std::string& op, const std::vector<LoomTensorDesc>& inputs,
                       const std::vector<LoomTensorDesc>& outputs,
                       const std::vector<LoomValue>& values = {}) {
  const auto& k = host().kernels.at(op);
  LoomKernelCall c{};
  c.struct_size = sizeof c;
  c.op = nullptr;
  c.inputs = inputs.data();
  c.num_inputs = static_cast<int32_t>(inputs.size());
  c.outputs = outputs.data();
  c.num_outputs = static_cast<int32_t>(outputs.size());
  c.values = values.data();
  c.num_values = static_cast<int32_t>(values.size());
  c.kernel_data = k.kernel_data;
  return k.fn(&c);
}

// Runs a call that must succeed.
inline void run(const std::string& op, const std::vector<LoomTensorDesc>& inputs,
                const std::vector<LoomTensorDesc>& outputs, const std::vector<LoomValue>& values = {}) {
  LoomError* e = call(op, inputs, outputs, values);
  if (e) {
    const std::string msg = e->message;
    e->destroy(e);
    FAIL(op << " failed: " << msg);
  }
}

// The status of a call (LOOM_STATUS_OK for success); frees the error.
inline int32_t status_of(const std::string& op, const std::vector<LoomTensorDesc>& inputs,
                         const std::vector<LoomTensorDesc>& outputs,
                         const std::vector<LoomValue>& values = {}) {
  LoomError* e = call(op, inputs, outputs, values);
  if (!e) return LOOM_STATUS_OK;
  const int32_t code = e->code;
  CHECK(e->message != nullptr);
  e->destroy(e);
  return code;
}

inline const std::vector<int32_t>& all_dtypes() {
  static const std::vector<int32_t> v{LOOM_DTYPE_BOOL,    LOOM_DTYPE_UINT8,   LOOM_DTYPE_INT8,
                                      LOOM_DTYPE_INT16,   LOOM_DTYPE_INT32,   LOOM_DTYPE_INT64,
                                      LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT32,
                                      LOOM_DTYPE_FLOAT64};
  return v;
}
inline bool is_floating(int32_t dt) { return dt >= LOOM_DTYPE_FLOAT16; }

// Machine epsilon of a floating dtype (for tolerances).
inline double eps_of(int32_t dt) {
  switch (dt) {
    case LOOM_DTYPE_FLOAT16: return 1.0 / 1024;
    case LOOM_DTYPE_BFLOAT16: return 1.0 / 128;
    case LOOM_DTYPE_FLOAT32: return 1.2e-7;
    default: return 2.3e-16;
  }
}

}  // namespace loom_test
