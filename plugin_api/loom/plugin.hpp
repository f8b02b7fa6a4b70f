// loom/plugin.hpp — header-only C++ conveniences over loom/plugin_api.h.
//
// Nothing here is part of the ABI: a plugin may ignore this file and speak C.
// What it gives:
//   * errors: `make_error`, `Failure` (throw inside a plugin), and `guard`,
//     the catch-all that turns any C++ exception into a LoomError* so no
//     exception ever crosses the boundary;
//   * `LOOM_PLUGIN(name, version, init)`: defines the entry symbol, with
//     `init` run under the guard;
//   * `Registrar`: the host table with exceptions and file:line filled in;
//   * `kernel<F>`: adapts `void F(const LoomKernelCall&)` to a LoomKernelFn;
//   * small descriptor helpers (numel, contiguity, typed data pointers) and
//     `visit_dtype` to switch on a dtype code with a real C++ type.
//
// A minimal plugin:
//
//   static void my_add(const LoomKernelCall& c) { ... }
//   static void init(loom::plugin::Registrar& r) {
//     r.device_type(my_desc);
//     r.kernel("add", "mydev", loom::plugin::kernel<my_add>);
//   }
//   LOOM_PLUGIN("mydev", "0.1", init)
#pragma once

#include <loom/plugin/half.hpp>
#include <loom/plugin_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace loom::plugin {

// ---------------------------------------------------------------- errors ---

namespace detail {
struct OwnedError {
  LoomError err;
  std::string text;
};
inline void destroy_owned_error(LoomError* e) {
  delete reinterpret_cast<OwnedError*>(e);  // err is the first member
}
}  // namespace detail

// A LoomError owned by the receiver. Never throws: if even the error cannot
// be allocated, returns a static out-of-memory error whose destroy is a no-op.
inline LoomError* make_error(int32_t code, std::string message) noexcept {
  try {
    auto* e = new detail::OwnedError{};
    e->text = std::move(message);
    e->err.struct_size = sizeof(LoomError);
    e->err.code = code;
    e->err.message = e->text.c_str();
    e->err.destroy = &detail::destroy_owned_error;
    return &e->err;
  } catch (...) {
    static LoomError oom{sizeof(LoomError), LOOM_STATUS_OUT_OF_MEMORY,
                         "out of memory while reporting an error",
                         [](LoomError*) {}};
    return &oom;
  }
}

// Throw this inside a plugin to return a specific status.
class Failure : public std::runtime_error {
 public:
  Failure(int32_t code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  int32_t code() const { return code_; }

 private:
  int32_t code_;
};

// Runs `f`; any exception becomes an error value. Use around every function
// the host calls.
template <class F>
LoomError* guard(F&& f) noexcept {
  try {
    f();
    return nullptr;
  } catch (const Failure& e) {
    return make_error(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return make_error(LOOM_STATUS_OUT_OF_MEMORY, "out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return make_error(LOOM_STATUS_INTERNAL, std::string("C++ exception: ") + e.what());
  } catch (...) {
    return make_error(LOOM_STATUS_INTERNAL, "unknown C++ exception");
  }
}

// Takes ownership of a received error and rethrows it as a Failure.
inline void throw_if_error(LoomError* e) {
  if (!e) return;
  std::string msg = e->message ? e->message : "(no message)";
  int32_t code = e->code;
  e->destroy(e);
  throw Failure(code, msg);
}

// ------------------------------------------------------------ descriptors ---

inline int64_t numel(const LoomTensorDesc& t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

inline bool is_contiguous(const LoomTensorDesc& t) {
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

inline bool is_absent(const LoomTensorDesc& t) { return t.ndim < 0; }

template <class T>
T* data_ptr(const LoomTensorDesc& t) {
  return reinterpret_cast<T*>(static_cast<char*>(t.data) + t.byte_offset);
}

inline size_t dtype_itemsize(int32_t dtype) {
  switch (dtype) {
#define LOOM_PLUGIN_ITEMSIZE(Name, py, code, dl, bits) \
  case code:                                           \
    return (bits) / 8;
    LOOM_DTYPE_LIST(LOOM_PLUGIN_ITEMSIZE)
#undef LOOM_PLUGIN_ITEMSIZE
  }
  return 0;
}

inline const char* dtype_name(int32_t dtype) {
  switch (dtype) {
#define LOOM_PLUGIN_DTYPE_NAME(Name, py, code, dl, bits) \
  case code:                                             \
    return #py;
    LOOM_DTYPE_LIST(LOOM_PLUGIN_DTYPE_NAME)
#undef LOOM_PLUGIN_DTYPE_NAME
  }
  return "unknown";
}

// The C++ type that stores a dtype.
template <int32_t Code> struct DTypeTraits;
template <> struct DTypeTraits<LOOM_DTYPE_BOOL> { using type = bool; };
template <> struct DTypeTraits<LOOM_DTYPE_UINT8> { using type = uint8_t; };
template <> struct DTypeTraits<LOOM_DTYPE_INT8> { using type = int8_t; };
template <> struct DTypeTraits<LOOM_DTYPE_INT16> { using type = int16_t; };
template <> struct DTypeTraits<LOOM_DTYPE_INT32> { using type = int32_t; };
template <> struct DTypeTraits<LOOM_DTYPE_INT64> { using type = int64_t; };
template <> struct DTypeTraits<LOOM_DTYPE_FLOAT16> { using type = Half; };
template <> struct DTypeTraits<LOOM_DTYPE_BFLOAT16> { using type = BFloat16; };
template <> struct DTypeTraits<LOOM_DTYPE_FLOAT32> { using type = float; };
template <> struct DTypeTraits<LOOM_DTYPE_FLOAT64> { using type = double; };

// Calls f(T{}) with the C++ type of `dtype` (a value-initialised tag).
// Throws Failure(UNSUPPORTED) for an unknown code.
template <class F>
decltype(auto) visit_dtype(int32_t dtype, F&& f) {
  switch (dtype) {
    case LOOM_DTYPE_BOOL: return f(bool{});
    case LOOM_DTYPE_UINT8: return f(uint8_t{});
    case LOOM_DTYPE_INT8: return f(int8_t{});
    case LOOM_DTYPE_INT16: return f(int16_t{});
    case LOOM_DTYPE_INT32: return f(int32_t{});
    case LOOM_DTYPE_INT64: return f(int64_t{});
    case LOOM_DTYPE_FLOAT16: return f(Half{});
    case LOOM_DTYPE_BFLOAT16: return f(BFloat16{});
    case LOOM_DTYPE_FLOAT32: return f(float{});
    case LOOM_DTYPE_FLOAT64: return f(double{});
  }
  throw Failure(LOOM_STATUS_UNSUPPORTED, "unknown dtype code " + std::to_string(dtype));
}

// ------------------------------------------------------------- arguments ---

inline int64_t value_int(const LoomKernelCall& c, int32_t i) {
  if (i >= c.num_values) throw Failure(LOOM_STATUS_INVALID_ARGUMENT, "missing argument");
  return c.values[i].u.i;
}
inline double value_float(const LoomKernelCall& c, int32_t i) {
  if (i >= c.num_values) throw Failure(LOOM_STATUS_INVALID_ARGUMENT, "missing argument");
  const LoomValue& v = c.values[i];
  return v.kind == LOOM_VALUE_FLOAT ? v.u.f : static_cast<double>(v.u.i);
}

// ----------------------------------------------------------------- kernels ---

// Adapts `void F(const LoomKernelCall&)` (which may throw) to a LoomKernelFn.
template <void (*F)(const LoomKernelCall&)>
LoomError* kernel(const LoomKernelCall* call) noexcept {
  return guard([&] { F(*call); });
}

// --------------------------------------------------------------- registrar ---

// The host table with C++ errors. Every method throws Failure on error; the
// LOOM_PLUGIN entry turns that into init's error result.
class Registrar {
 public:
  explicit Registrar(const LoomHostApi* api) : api_(api) {}

  const LoomHostApi& api() const { return *api_; }

  int32_t device_type(const LoomDeviceTypeDesc& desc) {
    int32_t id = -1;
    throw_if_error(api_->device_type_register(api_->host, &desc, &id));
    return id;
  }

  void def(const char* schema, LoomInferFn infer = nullptr, void* infer_data = nullptr,
           const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    LoomOpDef d{};
    d.struct_size = sizeof d;
    d.schema = schema;
    d.infer = infer;
    d.infer_data = infer_data;
    d.file = file;
    d.line = line;
    throw_if_error(api_->op_def(api_->host, &d));
  }

  void kernel(const char* op, const char* device_type, LoomKernelFn fn, uint64_t dtypes = 0,
              uint32_t flags = 0, void* kernel_data = nullptr,
              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    LoomKernelDesc d{};
    d.struct_size = sizeof d;
    d.op = op;
    d.device_type = device_type;
    d.fn = fn;
    d.kernel_data = kernel_data;
    d.dtypes = dtypes;
    d.flags = flags;
    d.file = file;
    d.line = line;
    throw_if_error(api_->kernel_register(api_->host, &d));
    kernels_.push_back(RegisteredKernel{op, device_type, fn, kernel_data, dtypes, flags});
  }

  // What kernel() registered, names copied.
  struct RegisteredKernel {
    std::string op, device_type;
    LoomKernelFn fn;
    void* kernel_data;
    uint64_t dtypes;
    uint32_t flags;
  };
  // Every kernel this registrar registered, in order: a plugin that runs
  // its own kernels for a fused region (LoomDeviceTypeDesc.fused_compile)
  // finds them here.
  const std::vector<RegisteredKernel>& registered_kernels() const { return kernels_; }

  void fallback(const char* device_type, LoomKernelFn fn, void* kernel_data = nullptr,
                const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    LoomFallbackDesc d{};
    d.struct_size = sizeof d;
    d.device_type = device_type;
    d.fn = fn;
    d.kernel_data = kernel_data;
    d.file = file;
    d.line = line;
    throw_if_error(api_->fallback_register(api_->host, &d));
  }

  void log(int32_t level, const std::string& message) const {
    api_->log(api_->host, level, message.c_str());
  }

 private:
  const LoomHostApi* api_;
  std::vector<RegisteredKernel> kernels_;
};

}  // namespace loom::plugin

// Defines the plugin's entry symbol. `init_fn` is `void(loom::plugin::Registrar&)`
// and may throw; it runs under the guard.
#define LOOM_PLUGIN(plugin_name, plugin_version, init_fn)                          \
  static LoomError* loom_plugin_init_trampoline_(const LoomHostApi* api) noexcept { \
    return ::loom::plugin::guard([&] {                                             \
      ::loom::plugin::Registrar registrar(api);                                    \
      init_fn(registrar);                                                          \
    });                                                                            \
  }                                                                                \
  extern "C" LOOM_PLUGIN_EXPORT const LoomPluginInfo* loom_plugin_entry(void) {    \
    static const LoomPluginInfo info = {sizeof(LoomPluginInfo),                    \
                                        LOOM_ABI_MAJOR,                            \
                                        LOOM_ABI_MINOR,                            \
                                        plugin_name,                               \
                                        plugin_version,                            \
                                        &loom_plugin_init_trampoline_};            \
    return &info;                                                                  \
  }
