// op_registry.cpp — the op catalog, its kernel tables and the registration
// verbs behind loom/library.h (def, impl, fallback).
#include "device_registry.h"

#include <loom/op_registry.h>
#include <loom/did_you_mean.h>
#include <loom/error.h>
#include <loom/plugin.hpp>

#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace loom {

OpDef::OpDef(Schema schema, std::string defined_at)
    : name_(schema.full_name()), schema_(std::move(schema)), defined_at_(std::move(defined_at)) {}

struct Dispatcher::Impl {
  mutable std::shared_mutex mutex;
  std::unordered_map<std::string, OpDef*> ops;  // OpDefs are never freed
  std::vector<OpDef*> order;
  // Kernels and fallbacks registered for device types not registered yet.
  std::multimap<std::string, std::pair<std::string, KernelEntry>> pending_kernels;
  std::map<std::string, KernelEntry> pending_fallbacks;
};

Dispatcher& Dispatcher::instance() {
  static auto* d = new Dispatcher;  // never destroyed: kernels outlive statics
  return *d;
}

Dispatcher::Impl& Dispatcher::impl_state() const {
  static auto* s = new Impl;
  return *s;
}

namespace {
// Whether `inplace` (`add_`) is the in-place form of `functional` (`add`):
// the same arguments, self mutated, one returned tensor. Then a kernel of
// the functional form computes the in-place op when handed self as output.
bool is_inplace_form_of(const Schema& inplace, const Schema& functional) {
  if (!inplace.is_inplace() || functional.is_inplace() || functional.returns.size() != 1 ||
      functional.returns[0].type != ArgType::Tensor)
    return false;
  const auto& a = inplace.args;
  const auto& b = functional.args;
  if (a.empty() || !a[0].mutated || a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].type != b[i].type || a[i].optional != b[i].optional || (i > 0 && a[i].mutated)) return false;
  return true;
}

// `add_` -> `add`, `div_.Tensor_mode` -> `div.Tensor_mode`; "" unless the
// name ends in '_'.
std::string functional_name(const Schema& s) {
  if (s.name.size() < 2 || s.name.back() != '_') return "";
  return s.name.substr(0, s.name.size() - 1) + (s.overload.empty() ? "" : "." + s.overload);
}
std::string inplace_name(const Schema& s) { return s.name + "_" + (s.overload.empty() ? "" : "." + s.overload); }
}  // namespace

OpDef& Dispatcher::def(const std::string& schema_text, const std::string& defined_at,
                       PrepareFn prepare, CompositeFn composite, LoomInferFn infer,
                       void* infer_data) {
  Schema schema = parse_schema(schema_text);
  auto& s = impl_state();
  std::unique_lock lock(s.mutex);
  const std::string name = schema.full_name();
  if (auto it = s.ops.find(name); it != s.ops.end())
    throw Error(detail::cat("def: op '", name, "' is already defined (at ",
                            it->second->defined_at(), "); second definition at ", defined_at));
  auto* op = new OpDef(std::move(schema), defined_at);
  op->prepare_ = prepare;
  op->composite_ = composite;
  op->infer_ = infer;
  op->infer_data_ = infer_data;
  s.ops.emplace(name, op);
  s.order.push_back(op);
  // Link the in-place / functional pair, whichever came second.
  if (auto it = s.ops.find(functional_name(op->schema_)); it != s.ops.end() &&
      is_inplace_form_of(op->schema_, it->second->schema_)) {
    op->functional_form_.store(it->second, std::memory_order_release);
    it->second->inplace_form_.store(op, std::memory_order_release);
  }
  if (auto it = s.ops.find(inplace_name(op->schema_)); it != s.ops.end() &&
      is_inplace_form_of(it->second->schema_, op->schema_)) {
    it->second->functional_form_.store(op, std::memory_order_release);
    op->inplace_form_.store(it->second, std::memory_order_release);
  }
  return *op;
}

OpDef* Dispatcher::find(std::string_view name) const {
  auto& s = impl_state();
  std::shared_lock lock(s.mutex);
  auto it = s.ops.find(std::string(name));
  return it == s.ops.end() ? nullptr : it->second;
}

OpDef& Dispatcher::op(std::string_view name) const {
  if (OpDef* op = find(name)) return *op;
  throw Error(ErrorKind::NotFound, detail::cat("unknown op '", name, "'", did_you_mean(name, op_names())));
}

std::vector<std::string> Dispatcher::op_names() const {
  auto& s = impl_state();
  std::shared_lock lock(s.mutex);
  std::vector<std::string> out;
  out.reserve(s.order.size());
  for (const OpDef* op : s.order) out.push_back(op->name());
  return out;
}

std::vector<const OpDef*> Dispatcher::ops() const {
  auto& s = impl_state();
  std::shared_lock lock(s.mutex);
  return {s.order.begin(), s.order.end()};
}

size_t Dispatcher::num_ops() const {
  auto& s = impl_state();
  std::shared_lock lock(s.mutex);
  return s.order.size();
}

void Dispatcher::impl(const std::string& op_name, const std::string& device_type,
                      KernelEntry entry) {
  OpDef* op = find(op_name);
  if (!op)
    throw Error(ErrorKind::NotFound,
                detail::cat("impl: ", entry.provider, " registers a kernel for unknown op '",
                            op_name, "'", did_you_mean(op_name, op_names()), " on '", device_type, "' (at ",
                            entry.where, ")"));
  auto& s = impl_state();
  std::unique_lock lock(s.mutex);
  const int slot = find_device_type_slot(device_type);
  if (slot < 0) {
    s.pending_kernels.emplace(device_type, std::make_pair(op_name, std::move(entry)));
    return;
  }
  // Published once, never freed: a dispatching thread may still hold the old one.
  op->kernels_[slot].store(new KernelEntry(std::move(entry)), std::memory_order_release);
}

void Dispatcher::fallback(const std::string& device_type, KernelEntry entry) {
  auto& s = impl_state();
  std::unique_lock lock(s.mutex);
  const int slot = find_device_type_slot(device_type);
  if (slot < 0) {
    s.pending_fallbacks[device_type] = std::move(entry);
    return;
  }
  fallbacks_[slot].store(new KernelEntry(std::move(entry)), std::memory_order_release);
}

void Dispatcher::on_device_type_registered(const std::string& name, int slot) {
  auto& s = impl_state();
  std::unique_lock lock(s.mutex);
  auto [lo, hi] = s.pending_kernels.equal_range(name);
  for (auto it = lo; it != hi; ++it) {
    OpDef* op = s.ops.at(it->second.first);
    op->kernels_[slot].store(new KernelEntry(std::move(it->second.second)),
                             std::memory_order_release);
  }
  s.pending_kernels.erase(lo, hi);
  if (auto it = s.pending_fallbacks.find(name); it != s.pending_fallbacks.end()) {
    fallbacks_[slot].store(new KernelEntry(std::move(it->second)), std::memory_order_release);
    s.pending_fallbacks.erase(it);
  }
}

// ---- Library ------------------------------------------------------------------

namespace {
// Heap-held C++ kernel behind the C signature.
LoomError* cpp_kernel_trampoline(const LoomKernelCall* call) noexcept {
  auto* k = static_cast<CppKernel*>(call->kernel_data);
  try {
    (*k)(*call);
    return nullptr;
  } catch (const plugin::Failure& e) {  // keeps its status, UNSUPPORTED included
    return plugin::make_error(e.code(), e.what());
  } catch (const Error& e) {
    return plugin::make_error(static_cast<int32_t>(e.kind()), e.what());
  } catch (const std::exception& e) {
    return plugin::make_error(LOOM_STATUS_INTERNAL, std::string("C++ exception: ") + e.what());
  } catch (...) {
    return plugin::make_error(LOOM_STATUS_INTERNAL, "unknown C++ exception");
  }
}
}  // namespace

Library::Library(std::string name, const char* file, int line)
    : name_(std::move(name)), where_(detail::cat(file, ":", line)) {}

Library& Library::def(const std::string& schema, LoomInferFn infer, void* infer_data) {
  Dispatcher::instance().def(schema, detail::cat("C++ library '", name_, "' (", where_, ")"),
                             nullptr, nullptr, infer, infer_data);
  return *this;
}

KernelEntry Library::entry(LoomKernelFn fn, void* data, KernelOptions options) const {
  KernelEntry e;
  e.fn = fn;
  e.data = data;
  e.dtypes = options.dtypes;
  e.flags = options.flags;
  e.provider = detail::cat("C++ library '", name_, "'");
  e.where = where_;
  return e;
}

Library& Library::impl(const std::string& op, const std::string& device_type, LoomKernelFn fn,
                       KernelOptions options) {
  Dispatcher::instance().impl(op, device_type, entry(fn, nullptr, options));
  return *this;
}

Library& Library::impl(const std::string& op, const std::string& device_type, CppKernel kernel,
                       KernelOptions options) {
  // The callable lives as long as the table: never freed.
  Dispatcher::instance().impl(op, device_type,
                              entry(&cpp_kernel_trampoline, new CppKernel(std::move(kernel)), options));
  return *this;
}

Library& Library::fallback(const std::string& device_type, LoomKernelFn fn) {
  Dispatcher::instance().fallback(device_type, entry(fn, nullptr, {}));
  return *this;
}

detail::LibraryRegistrar::LibraryRegistrar(const char* name, void (*init)(Library&),
                                           const char* file, int line) {
  Library lib(name, file, line);
  init(lib);
}

}  // namespace loom

namespace loom {

std::vector<KernelListing> kernels_on(const std::string& device_type) {
  std::vector<KernelListing> out;
  const int slot = find_device_type_slot(device_type);
  if (slot < 0) return out;
  for (const OpDef* op : Dispatcher::instance().ops()) {
    const KernelEntry* k = op->kernel(slot);
    const OpDef* via = nullptr;
    if (!k && op->functional_form()) {
      k = op->functional_form()->kernel(slot);
      via = op->functional_form();
    }
    if (!k) continue;
    out.push_back({op->name(), k->dtypes, k->flags, k->provider, k->where, via ? via->name() : ""});
  }
  return out;
}

}  // namespace loom
