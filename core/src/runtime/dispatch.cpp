// dispatch.cpp — one call through the dispatcher:
//   prepare -> device kernel (for an in-place op without one: the functional
//   form's kernel on self) -> composite -> fallback -> error.
// This is the per-op hot path: no heap allocation beyond the outputs, no
// locks, one atomic load for the kernel, one thread-local load for the
// current stream.
#include "autocast_call.h"
#include "current_stream.h"
#include "device_registry.h"
#include "dispatch_trace_hook.h"
#include "fallback.h"
#include "plugin_call.h"
#include "profiler_hook.h"

#include <loom/autograd.h>
#include <loom/dispatch_observer.h>
#include <loom/error.h>
#include <loom/op_call.h>
#include <loom/plugin.hpp>


namespace loom {

namespace autograd::detail {
void dispatch_with_grad(OpCall& call);  // autograd/dispatch_autograd.cpp
}  // namespace autograd::detail

namespace detail {

namespace {
LoomTensorDesc operand_desc(const Operand& o) {
  if (!o.tensor) {
    LoomTensorDesc d{};
    d.struct_size = sizeof d;
    d.ndim = -1;
    return d;
  }
  LoomTensorDesc d = o.tensor->desc();
  if (o.view) {
    d.ndim = o.view.ndim;
    d.shape = o.view.sizes;
    d.strides = o.view.strides;
  }
  return d;
}

LoomTensorDesc output_desc(const OutputPlan& p) {
  LoomTensorDesc d = p.result.impl()->desc();
  if (p.kernel_view) {
    d.ndim = p.kernel_view.ndim;
    d.shape = p.kernel_view.sizes;
    d.strides = p.kernel_view.strides;
  }
  return d;
}
}  // namespace

LoomError* invoke_kernel(const KernelEntry& entry, OpCall& call, const char* role, const OpDef* as_op) {
  // Descriptors on the stack, uninitialised until filled (no value-init).
  constexpr size_t kInline = 8;
  const size_t n_in = call.inputs.size(), n_out = call.outputs.size();
  std::unique_ptr<LoomTensorDesc[]> heap;
  LoomTensorDesc stack[kInline];
  LoomTensorDesc* descs = stack;
  if (n_in + n_out > kInline) {
    heap.reset(new LoomTensorDesc[n_in + n_out]);
    descs = heap.get();
  }
  LoomTensorDesc* in = descs;
  LoomTensorDesc* out = descs + n_in;
  for (size_t i = 0; i < n_in; ++i) in[i] = operand_desc(call.inputs[i]);
  for (size_t i = 0; i < n_out; ++i) out[i] = output_desc(call.outputs[i]);
  LoomKernelCall kc;
  kc.struct_size = sizeof kc;
  kc.op = (as_op ? as_op : call.op)->abi();
  kc.inputs = in;
  kc.num_inputs = static_cast<int32_t>(n_in);
  kc.num_outputs = static_cast<int32_t>(n_out);
  kc.outputs = out;
  kc.values = call.values.data();
  kc.num_values = static_cast<int32_t>(call.values.size());
  kc.reserved = 0;
  kc.stream = current_stream_handle(call.device);  // one thread-local load without streams
  kc.kernel_data = entry.data;
  // A kernel that lets a C++ exception escape becomes a loom::Error naming
  // the op, the device and the kernel's provider (plugin_call.h).
  return call_plugin(
      [&] {
        return cat("the ", role, " for op '", call.op->name(), "' on ", call.device.str(), " (",
                   entry.provider, entry.where.empty() ? "" : ", registered at " + entry.where, ")");
      },
      entry.fn, &kc);
}

namespace {

bool all_contiguous(const OpCall& call) {
  for (const auto& o : call.inputs) {
    if (!o.tensor) continue;
    if (o.view ? !plugin::is_contiguous(operand_desc(o)) : !o.tensor->is_contiguous())
      return false;
  }
  for (const auto& p : call.outputs)
    if (p.kernel_view || !p.result.is_contiguous()) return false;
  return true;
}

// For LOOM_KERNEL_CONTIGUOUS_ONLY kernels: run on contiguous copies and
// write non-contiguous outputs back.
LoomError* invoke_contiguous(const KernelEntry& entry, OpCall& call, const OpDef* as_op) {
  if (all_contiguous(call)) return invoke_kernel(entry, call, "kernel", as_op);
  for (auto& o : call.inputs) {
    if (!o.tensor) continue;
    Tensor view(IntrusivePtr<TensorImpl>(const_cast<TensorImpl*>(o.tensor)));
    if (o.view) view = view.as_strided(o.view.sizes_ref(), o.view.strides_ref());
    Tensor c = view.contiguous();
    call.temps.push_back(c);
    o.tensor = c.impl();
    o.view = View{};
  }
  // Outputs the kernel cannot write in place get a contiguous stand-in that
  // is copied into what the kernel would have written (the output, or its
  // kernel view) afterwards.
  struct Saved {
    Tensor result;
    View kernel_view;
    Tensor target;  // result seen through kernel_view
  };
  SmallVector<Saved, 2> saved;
  for (auto& p : call.outputs) {
    Tensor target = p.kernel_view ? p.result.as_strided(p.kernel_view.sizes_ref(),
                                                        p.kernel_view.strides_ref())
                                  : p.result;
    if (target.is_contiguous()) {
      saved.emplace_back();
      continue;
    }
    saved.push_back({p.result, p.kernel_view, target});
    p.result = empty_contiguous(call.device, target.dtype(), target.sizes());
    p.kernel_view = View{};
  }
  LoomError* err = invoke_kernel(entry, call, "kernel", as_op);
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    if (!saved[i].result.defined()) continue;
    if (!err) saved[i].target.copy_(call.outputs[i].result);
    call.outputs[i].result = saved[i].result;  // the caller sees its own output
    call.outputs[i].kernel_view = saved[i].kernel_view;
  }
  return err;
}

// Runs `entry`, the device's kernel for `op` (the call's own op, or the
// functional form of an in-place call). nullptr when it ran; a decline
// (UNSUPPORTED) comes back for the caller to own; any other error throws.
LoomError* run_kernel(const KernelEntry& entry, const OpDef& op, OpCall& call, DispatchTrace* trace) {
  allocate_outputs(call);
  const OpDef* as_op = &op == call.op ? nullptr : &op;
  LoomError* err = (entry.flags & LOOM_KERNEL_CONTIGUOUS_ONLY) ? invoke_contiguous(entry, call, as_op)
                                                               : invoke_kernel(entry, call, "kernel", as_op);
  if (!err) [[likely]] {
    if (trace) [[unlikely]]
      DispatchTraceAccess::record(*trace, call, DispatchPath::Kernel, entry.provider);
    return nullptr;
  }
  if (err->code != LOOM_STATUS_UNSUPPORTED) {
    if (trace) DispatchTraceAccess::record(*trace, call, DispatchPath::Kernel, entry.provider);
    throw_abi_error(err, cat(call.op->name(), " on ", call.device.str(), " (", entry.provider, ")"));
  }
  return err;
}

NativeMiss declined_by(const KernelEntry& entry, const OpDef& op, LoomError* err) {
  NativeMiss why = NativeMiss::declined(entry, op, err->message ? err->message : "");
  err->destroy(err);
  return why;
}

// Everything after the device's own kernel for the op: the functional
// form's kernel (in-place ops), the composite, the fallback, the error.
// `kernel` declined the call with `declined` (owned here) when both are set.
[[gnu::noinline]] void run_without_own_kernel(OpCall& call, DispatchTrace* trace, const KernelEntry* kernel,
                                              LoomError* declined) {
  const int slot = call.device.type;
  NativeMiss why = declined ? declined_by(*kernel, *call.op, declined) : NativeMiss{};
  // An in-place op runs its functional form's kernel, handed self as the
  // output, where the device has none of its own (or it declined).
  if (const OpDef* f = call.op->functional_form()) {
    const KernelEntry* fk = f->kernel(slot);
    const bool same = kernel && fk && kernel->fn == fk->fn && kernel->data == fk->data;
    if (fk && !same && fk->accepts(static_cast<int>(call.compute_dtype))) {
      LoomError* err = run_kernel(*fk, *f, call, trace);
      if (!err) return;
      why = declined_by(*fk, *f, err);
    }
  }
  if (CompositeFn composite = call.op->composite()) {
    if (trace) [[unlikely]] {
      static const std::string kComposite = "core composite";
      DispatchTraceAccess::record(*trace, call, DispatchPath::Composite, kComposite);
    }
    DispatchTraceAccess::Nested nested(trace);
    composite(call);
    return;
  }
  if (why.kind == NativeMiss::None) why = NativeMiss::of(call);
  const KernelEntry* boxed = Dispatcher::instance().fallback_for(slot);
  if (boxed || !call.device.is_host()) {
    if (trace) [[unlikely]] {
      static const std::string kCpuFallback = "CPU fallback";
      DispatchTraceAccess::record(*trace, call, DispatchPath::Fallback, boxed ? boxed->provider : kCpuFallback,
                                  why.describe(call));
    }
    DispatchTraceAccess::Nested nested(trace);
    run_fallback(call, boxed, why);
    return;
  }
  throw_no_native(call, why);
}

}  // namespace
}  // namespace detail

void run_prepared(OpCall& call) {
  const KernelEntry* k = call.op->kernel(call.device.type);
  // nullptr unless a tool is tracing this thread (loom/dispatch_trace.h).
  DispatchTrace* const trace = detail::active_trace;
  if (k && k->accepts(static_cast<int>(call.compute_dtype))) [[likely]] {
    LoomError* declined = detail::run_kernel(*k, *call.op, call, trace);
    if (!declined) [[likely]]
      return;
    detail::run_without_own_kernel(call, trace, k, declined);
    return;
  }
  detail::run_without_own_kernel(call, trace, k, nullptr);
}

namespace {
// The rule for ops a plugin or C++ library defined: its infer function, or
// elementwise broadcasting and promotion.
void default_prepare(OpCall& call) {
  const Schema& schema = call.op->schema();
  // A Generator object is core-internal (detail::kValueGenerator): only the
  // core's random ops turn one into counters a kernel can read.
  for (const LoomValue& v : call.values)
    LOOM_CHECK(v.kind != detail::kValueGenerator, call.op->name(),
               ": a generator can be passed only to the core's random ops; pass generator=None");
  if (LoomInferFn infer = call.op->infer()) {
    detail::SmallVector<LoomTensorDesc, 4> in;
    for (size_t i = 0; i < call.args.size(); ++i) {
      Operand& o = call.inputs.emplace_back();
      o.tensor = call.args[i] && call.args[i]->defined() ? call.args[i]->impl() : nullptr;
    }
    for (const auto& o : call.inputs) {
      LoomTensorDesc d{};
      d.struct_size = sizeof d;
      d.ndim = -1;
      in.push_back(o.tensor ? o.tensor->desc() : d);
    }
    const size_t n = schema.returns.size();
    std::vector<std::vector<int64_t>> shapes(n, std::vector<int64_t>(64));
    std::vector<LoomOutputSpec> specs(n);
    for (size_t i = 0; i < n; ++i)
      specs[i] = LoomOutputSpec{sizeof(LoomOutputSpec), -1, -1, shapes[i].data(), 64};
    LoomKernelCall kc{};
    kc.struct_size = sizeof kc;
    kc.op = call.op->abi();
    kc.inputs = in.data();
    kc.num_inputs = static_cast<int32_t>(in.size());
    kc.values = call.values.data();
    kc.num_values = static_cast<int32_t>(call.values.size());
    auto context = [&] { return detail::cat("the infer function of op '", call.op->name(), "'"); };
    if (LoomError* err = detail::call_plugin(context, infer, &kc, specs.data(),
                                             static_cast<int32_t>(n), call.op->infer_data()))
      detail::throw_abi_error(err, call.op->name());
    for (size_t i = 0; i < n; ++i) {
      LOOM_CHECK(is_valid(specs[i].dtype) && specs[i].ndim >= 0 && specs[i].ndim <= 64,
                 call.op->name(), ": infer function returned an invalid spec for output ", i);
      auto& p = call.outputs.emplace_back();
      p.dtype = static_cast<DType>(specs[i].dtype);
      p.sizes = DimVector(shapes[i].begin(), shapes[i].begin() + specs[i].ndim);
    }
    call.compute_dtype = n ? call.outputs[0].dtype : DType::Float32;
    return;
  }
  if (schema.is_inplace()) {
    prepare_inplace(call);
    return;
  }
  const DType t = result_type(call);
  prepare_elementwise(call, t, t);
}

void check_arity(const OpCall& call) {
  const Schema& s = call.op->schema();
  const size_t tensors = static_cast<size_t>(s.num_tensor_args());
  LOOM_CHECK(call.args.size() == tensors && call.values.size() == s.args.size() - tensors,
             call.op->name(), ": expected ", tensors, " tensor and ", s.args.size() - tensors,
             " other argument(s) (schema: ", s.text, "), got ", call.args.size(), " and ",
             call.values.size());
}
}  // namespace

namespace detail {
void prepare_call(OpCall& call) {
  if (PrepareFn prepare = call.op->prepare()) [[likely]] {
    prepare(call);
  } else {
    check_arity(call);
    default_prepare(call);
  }
}
}  // namespace detail

namespace {
// The whole call, inlined into both paths below so the unprofiled one stays
// the single frame it was before profiling existed.
[[gnu::always_inline]] inline void dispatch_call(OpCall& call) {
  bool found = false, requires_grad = false;
  for (const Tensor* t : call.args) {
    if (!t || !t->defined()) continue;
    requires_grad |= t->impl()->requires_grad();
    if (!found) {
      call.device = t->device();
      found = true;
    } else if (t->device() != call.device) [[unlikely]] {
      throw Error(detail::cat(call.op->name(), ": expected all tensors on the same device, got ",
                              call.device.str(), " and ", t->device().str()));
    }
  }
  LOOM_CHECK(found, call.op->name(), ": needs at least one defined tensor argument");
  // Autocast (core/src/runtime/autocast.cpp) casts the arguments before autograd
  // sees them, so the casts are recorded too.
  std::vector<Tensor> autocast_casts;
  if (detail::autocast_active()) [[unlikely]] {
    detail::autocast_call(call, autocast_casts);
    for (const Tensor& t : autocast_casts) requires_grad |= t.impl()->requires_grad();
  }
  // The autograd layer (core/src/autograd/dispatch_autograd.cpp).
  if (requires_grad && autograd::GradMode::is_enabled()) [[unlikely]] {
    autograd::detail::dispatch_with_grad(call);
    return;
  }
  detail::prepare_call(call);
  if (!call.out_args.empty()) [[unlikely]] {
    detail::bind_out_args(call);
    run_prepared(call);
    detail::finish_out_args(call);
    return;
  }
  run_prepared(call);
  // In-place writes: bump the version of every mutated argument's storage.
  const Schema& s = call.op->schema();
  if (s.is_inplace()) {
    size_t ti = 0;
    for (const auto& a : s.args) {
      if (a.type != ArgType::Tensor) continue;
      if (a.mutated && call.args[ti] && call.args[ti]->defined())
        call.args[ti]->storage()->bump_version();
      ++ti;
    }
  }
}

[[gnu::noinline]] void dispatch_profiled(OpCall& call, profiler::Profile& profile) {
  profiler::ProfilerAccess::Scope scope(profile, call);
  dispatch_call(call);
}

// The observer sees the call once it ran; the calls made underneath it run
// unobserved (loom/dispatch_observer.h).
[[gnu::noinline]] void dispatch_observed(OpCall& call, DispatchObserver& observer) {
  struct Lifted {  // also when the call throws
    Lifted() { detail::active_observer = nullptr; }
    ~Lifted() { detail::active_observer = saved; }
    DispatchObserver* saved = nullptr;
  };
  const detail::SmallVector<LoomValue, 4> as_passed = call.values;  // prepare may rewrite them
  Lifted lifted;  // what the observer itself runs is not observed either
  lifted.saved = &observer;
  dispatch(call);
  observer.after(call, std::span<const LoomValue>(as_passed.data(), as_passed.size()));
}
}  // namespace

constinit thread_local DispatchObserver* detail::active_observer LOOM_FAST_TLS = nullptr;

ObserveDispatch::ObserveDispatch(DispatchObserver& observer) : previous_(detail::active_observer) {
  detail::active_observer = &observer;
}
ObserveDispatch::~ObserveDispatch() { detail::active_observer = previous_; }

void dispatch(OpCall& call) {
  // nullptr unless a graph capture watches this thread (loom/dispatch_observer.h).
  if (DispatchObserver* const observer = detail::active_observer) [[unlikely]] {
    dispatch_observed(call, *observer);
    return;
  }
  // nullptr unless a profile records on this thread (loom/profiler.h).
  if (profiler::Profile* const profile = profiler::detail::active_profile) [[unlikely]] {
    dispatch_profiled(call, *profile);
    return;
  }
  dispatch_call(call);
}

}  // namespace loom
