// loom/dispatcher.h — the three verbs: def, impl, fallback.
//
// Every op lives once in the catalog (an OpDef). Each OpDef has a dense table
// of kernels indexed by device slot, so finding the kernel for a call is one
// atomic load. Registration (rare) takes a lock and publishes entries that
// are never freed, so it is safe while other threads dispatch.
//
// Registering from C++:
//
//   LOOM_LIBRARY(myops, m) {
//     m.def("myops_scale(Tensor self, float factor=1.0) -> Tensor");
//     m.impl("myops_scale", "cpu", my_scale_kernel);          // a LoomKernelFn
//     m.impl("myops_scale", "cpu", [](const LoomKernelCall& c) { ... });
//     m.fallback("mydev", my_boxed_fallback);
//   }
//
// From a plugin, the same verbs are LoomHostApi's op_def, kernel_register and
// fallback_register (loom/plugin_api.h). A registration remembers its
// file:line (or plugin) for error messages.
#pragma once

#include <loom/device.h>
#include <loom/plugin_api.h>
#include <loom/schema.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace loom {

struct OpCall;
namespace autograd {
struct Formula;
}

// A kernel in the table. Immutable once published.
struct KernelEntry {
  LoomKernelFn fn = nullptr;
  void* data = nullptr;
  uint64_t dtypes = 0;   // LOOM_DTYPE_BIT mask; 0 = every dtype
  uint32_t flags = 0;    // LOOM_KERNEL_*
  std::string provider;  // "plugin 'cpu'" or "C++ library 'myops'"
  std::string where;     // "file.cpp:12"
  bool accepts(int dtype) const { return dtypes == 0 || (dtypes >> dtype) & 1u; }
};

// Prepares a call: validates arguments, computes outputs, casts and
// broadcasts inputs (see op_call.h). Throws loom::Error naming the op.
using PrepareFn = void (*)(OpCall&);
// Computes the op with other ops (no kernel of its own needed).
using CompositeFn = void (*)(OpCall&);

class OpDef {
 public:
  OpDef(Schema schema, std::string defined_at);

  const std::string& name() const { return name_; }  // "add" or "add.out"
  const Schema& schema() const { return schema_; }
  const std::string& defined_at() const { return defined_at_; }

  const KernelEntry* kernel(int slot) const {
    return kernels_[slot].load(std::memory_order_acquire);
  }
  PrepareFn prepare() const { return prepare_; }
  CompositeFn composite() const { return composite_; }
  LoomInferFn infer() const { return infer_; }
  void* infer_data() const { return infer_data_; }

  // The handle plugins see.
  const LoomOp* abi() const { return reinterpret_cast<const LoomOp*>(this); }
  static const OpDef* from_abi(const LoomOp* op) { return reinterpret_cast<const OpDef*>(op); }

  // The op's derivative (core/src/autograd/formula.h); nullptr when it has
  // none. Set once, when the defining library loads.
  const autograd::Formula* formula() const { return formula_; }
  void set_formula(const autograd::Formula* f) const { formula_ = f; }

  // How often this op ran through a fallback on each device slot.
  uint64_t fallback_count(int slot) const { return fallbacks_[slot].load(std::memory_order_relaxed); }
  void count_fallback(int slot) const { fallbacks_[slot].fetch_add(1, std::memory_order_relaxed); }

 private:
  friend class Dispatcher;
  std::string name_;
  Schema schema_;
  std::string defined_at_;
  PrepareFn prepare_ = nullptr;
  CompositeFn composite_ = nullptr;
  LoomInferFn infer_ = nullptr;
  void* infer_data_ = nullptr;
  mutable const autograd::Formula* formula_ = nullptr;
  std::array<std::atomic<const KernelEntry*>, kMaxDeviceTypes> kernels_{};
  mutable std::array<std::atomic<uint64_t>, kMaxDeviceTypes> fallbacks_{};
};

// Options of an impl registered from C++.
struct KernelOptions {
  uint64_t dtypes = 0;  // LOOM_DTYPE_BIT mask; 0 = all
  uint32_t flags = 0;   // LOOM_KERNEL_*
};

// The process-wide catalog and tables. All members are thread-safe.
class Dispatcher {
 public:
  static Dispatcher& instance();

  // def: adds an op. Throws on a malformed schema or a duplicate name.
  OpDef& def(const std::string& schema, const std::string& defined_at,
             PrepareFn prepare = nullptr, CompositeFn composite = nullptr,
             LoomInferFn infer = nullptr, void* infer_data = nullptr);
  // impl: publishes a kernel for (op, device type). The device type may be
  // registered later (the kernel waits for it); the op must exist.
  void impl(const std::string& op, const std::string& device_type, KernelEntry entry);
  // fallback: a boxed kernel for every op on a device type.
  void fallback(const std::string& device_type, KernelEntry entry);

  OpDef* find(std::string_view op_name) const;  // nullptr when unknown
  OpDef& op(std::string_view op_name) const;    // throws when unknown
  std::vector<const OpDef*> ops() const;
  // How many ops are defined (grows as libraries and plugins define more);
  // cheap, for caches keyed on the catalog.
  size_t num_ops() const;

  // The boxed fallback registered for a slot, or nullptr.
  const KernelEntry* fallback_for(int slot) const {
    return fallbacks_[slot].load(std::memory_order_acquire);
  }
  // Installs kernels waiting for this device type (called on registration).
  void on_device_type_registered(const std::string& name, int slot);

 private:
  Dispatcher() = default;
  struct Impl;
  Impl& impl_state() const;
  std::array<std::atomic<const KernelEntry*>, kMaxDeviceTypes> fallbacks_{};
};

// A C++ kernel: may throw; wrapped into a LoomKernelFn by the Library.
using CppKernel = std::function<void(const LoomKernelCall&)>;

// The registration block behind LOOM_LIBRARY.
class Library {
 public:
  Library(std::string name, const char* file, int line);
  Library& def(const std::string& schema, LoomInferFn infer = nullptr, void* infer_data = nullptr);
  Library& impl(const std::string& op, const std::string& device_type, LoomKernelFn fn,
                KernelOptions options = {});
  Library& impl(const std::string& op, const std::string& device_type, CppKernel kernel,
                KernelOptions options = {});
  Library& fallback(const std::string& device_type, LoomKernelFn fn);

 private:
  KernelEntry entry(LoomKernelFn fn, void* data, KernelOptions options) const;
  std::string name_;
  std::string where_;
};

namespace detail {
struct LibraryRegistrar {
  LibraryRegistrar(const char* name, void (*init)(Library&), const char* file, int line);
};
}  // namespace detail

// ---- fallback policy and counters -----------------------------------------

enum class FallbackPolicy { Allow, Warn, Error };
// From LOOM_FALLBACK (allow|warn|error; default allow), unless set.
FallbackPolicy fallback_policy();
void set_fallback_policy(FallbackPolicy p);

// How often `op` fell back on `device_type`.
uint64_t fallback_count(const std::string& op, const std::string& device_type);
struct FallbackRecord {
  std::string op;
  std::string device_type;
  uint64_t count;
};
// Every (op, device type) with a non-zero count.
std::vector<FallbackRecord> fallback_counts();

}  // namespace loom

#define LOOM_LIBRARY_CONCAT_(a, b) a##b
#define LOOM_LIBRARY_CONCAT(a, b) LOOM_LIBRARY_CONCAT_(a, b)
// LOOM_LIBRARY(name, m) { m.def(...); m.impl(...); }
#define LOOM_LIBRARY(name, m)                                                       \
  static void LOOM_LIBRARY_CONCAT(loom_library_init_, name)(::loom::Library&);     \
  static const ::loom::detail::LibraryRegistrar LOOM_LIBRARY_CONCAT(               \
      loom_library_registrar_, name)(#name, &LOOM_LIBRARY_CONCAT(loom_library_init_, name), \
                                     __FILE__, __LINE__);                           \
  static void LOOM_LIBRARY_CONCAT(loom_library_init_, name)(::loom::Library & m)
