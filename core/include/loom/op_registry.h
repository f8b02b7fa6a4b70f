// loom/op_registry.h — the catalog and its kernel tables: every op once (an
// OpDef, with its schema, prepare/composite functions and derivative) and,
// per op, a dense table of kernels indexed by device slot, so finding the
// kernel for a call is one atomic load. Registration (rare) takes a lock and
// publishes entries that are never freed, so it is safe while other threads
// dispatch.
//
// This is the registry's own interface, for tools that walk the catalog
// (loom-conformance, the Python bindings, tests). To define ops and register
// kernels from C++, include loom/library.h (LOOM_LIBRARY: def, impl,
// fallback); from a plugin, use LoomHostApi's op_def, kernel_register and
// fallback_register (loom/plugin_api.h).
#pragma once

#include <loom/device.h>
#include <loom/library.h>
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

  // For an in-place op (`add_`, schema `Tensor(a!) self` first), its
  // functional form (`add`: same name without the `_`, same overload and
  // argument types); nullptr for every other op. A device with no kernel of
  // its own for the in-place op runs the functional form's kernel with
  // outputs[0] aliasing inputs[0] (docs/kernel_conventions.md). Linked by
  // `def`, whichever of the two is defined first.
  const OpDef* functional_form() const { return functional_form_.load(std::memory_order_acquire); }
  // The other direction: for `add`, `add_` (same link); nullptr when the op
  // has no in-place form.
  const OpDef* inplace_form() const { return inplace_form_.load(std::memory_order_acquire); }

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
  std::atomic<const OpDef*> functional_form_{nullptr};
  std::atomic<const OpDef*> inplace_form_{nullptr};
  std::array<std::atomic<const KernelEntry*>, kMaxDeviceTypes> kernels_{};
  mutable std::array<std::atomic<uint64_t>, kMaxDeviceTypes> fallbacks_{};
};


// One kernel as registered on a device type, for listings (loom-info
// --kernels, loom.kernels()).
struct KernelListing {
  std::string op;          // "add", "div.Tensor_mode"
  uint64_t dtypes = 0;     // LOOM_DTYPE_BIT mask; 0 = every dtype
  uint32_t flags = 0;      // LOOM_KERNEL_*
  std::string provider;    // "plugin 'cpu'"
  std::string where;       // "file.cpp:12"
  // An in-place op with no kernel of its own: the functional op whose
  // kernel runs it ("add" for add_); then dtypes/flags/provider are that
  // kernel's. Empty for a kernel registered for the op itself.
  std::string via;
};

// Every op with a kernel on `device_type` (its own or, for in-place ops, the
// functional form's), in catalog order. Unknown type: empty.
std::vector<KernelListing> kernels_on(const std::string& device_type);

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
  OpDef& op(std::string_view op_name) const;    // throws when unknown, suggesting a near name
  std::vector<std::string> op_names() const;    // every op's full name, in definition order
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

}  // namespace loom
