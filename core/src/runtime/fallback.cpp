// fallback.cpp — everything about running an op a device has no kernel for:
// the policy (LOOM_FALLBACK=allow|warn|error) and the per-op counters, the
// decision between the device's boxed fallback and the CPU (run_fallback),
// and the CPU fallback every non-CPU device has by default: copy tensor
// arguments to CPU, run the op there, copy outputs and mutated arguments
// back. Copies keep each tensor's layout (storage span), so a broadcast or
// strided argument costs only the bytes it covers.
#include "fallback.h"

#include "device_registry.h"
#include "transfer.h"

#include <loom/error.h>
#include <loom/op_call.h>
#include <loom/op_registry.h>

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>
#include <tuple>

namespace loom::detail {

void cpu_fallback(OpCall& call) {
  const Device host = cpu_device();
  const OpDef& op = *call.op;
  if (!op.kernel(host.type) && !op.composite())
    throw Error(ErrorKind::NotFound,
                cat("op '", op.name(), "' has no kernel on '", call.device.type_name(),
                    "' and no CPU kernel to fall back to"));

  OpCall cpu(op);
  cpu.device = host;
  cpu.compute_dtype = call.compute_dtype;
  cpu.values = call.values;  // borrowed pointers stay valid: `call` outlives `cpu`
  // Host copies of the inputs, shared by outputs that alias them (in-place).
  SmallVector<Tensor, 4> host_inputs;
  for (const Operand& o : call.inputs) {
    Operand& h = cpu.inputs.emplace_back();
    if (!o.tensor) {
      host_inputs.emplace_back();
      continue;
    }
    host_inputs.push_back(span_copy(*o.tensor, host));
    h.tensor = host_inputs.back().impl();
    h.view = o.view;  // points into `call`'s arena, which outlives `cpu`
  }
  for (const OutputPlan& p : call.outputs) {
    OutputPlan& h = cpu.outputs.emplace_back();
    h.dtype = p.dtype;
    h.sizes = p.sizes;
    h.kernel_view = p.kernel_view;
    if (!p.result.defined()) continue;  // allocated on CPU by run_prepared
    for (size_t i = 0; i < call.inputs.size(); ++i)
      if (call.inputs[i].tensor == p.result.impl()) h.result = host_inputs[i];
    if (!h.result.defined()) h.result = span_copy(*p.result.impl(), host);
  }

  run_prepared(cpu);

  for (size_t i = 0; i < call.outputs.size(); ++i) {
    OutputPlan& p = call.outputs[i];
    const Tensor& h = cpu.outputs[i].result;
    if (p.result.defined()) {
      span_write_back(h, *p.result.impl());
    } else {
      // A fresh output: the CPU kernel wrote a contiguous tensor of the same
      // shape (or a composite returned any layout): move it as is.
      p.result = h.to(call.device);
    }
  }
  // Arguments the op mutates without returning them.
  size_t ti = 0;
  for (const Argument& a : op.schema().args) {
    if (a.type != ArgType::Tensor) continue;
    const Operand& o = call.inputs[ti];
    bool returned = false;
    for (const OutputPlan& p : call.outputs) returned |= p.result.impl() == o.tensor;
    if (a.mutated && o.tensor && !returned) span_write_back(host_inputs[ti], *o.tensor);
    ++ti;
  }
}

namespace {

std::string quoted(const OpDef& op) { return cat("'", op.name(), "'"); }

// Once per op, device slot, dtype and kind of miss: a kernel that declines
// float16 says so even after one that lacked bfloat16 was reported.
bool warned_once(const OpCall& call, NativeMiss::Kind kind) {
  static std::mutex m;
  static std::set<std::tuple<const OpDef*, int, int, int>> seen;
  std::lock_guard lock(m);
  return !seen.insert({call.op, call.device.type, static_cast<int>(call.compute_dtype), kind}).second;
}

}  // namespace

NativeMiss NativeMiss::of(const OpCall& call) {
  NativeMiss why;
  const int slot = call.device.type;
  for (const OpDef* op : {call.op, call.op->functional_form()}) {
    if (!op) continue;
    if (const KernelEntry* k = op->kernel(slot)) {
      why.kind = NoDtype;
      why.kernel_op = op;
      why.dtypes = dtype_mask_str(k->dtypes);
      return why;
    }
  }
  why.kind = NoKernel;
  return why;
}

NativeMiss NativeMiss::declined(const KernelEntry& entry, const OpDef& op, std::string reason) {
  NativeMiss why;
  why.kind = Declined;
  why.kernel_op = &op;
  why.provider = entry.provider + (entry.where.empty() ? "" : ", registered at " + entry.where);
  why.reason = reason.empty() ? "(no reason given)" : std::move(reason);
  return why;
}

std::string NativeMiss::describe(const OpCall& call) const {
  const std::string device = cat("'", call.device.type_name(), "'");
  const std::string op = quoted(*call.op);
  const OpDef* f = call.op->functional_form();
  switch (kind) {
    case NoDtype:
      if (kernel_op != call.op)
        return cat("op ", op, " has no kernel on device ", device, ", and the kernel of its functional form ",
                   quoted(*kernel_op), " takes ", dtypes, ", not dtype ", name(call.compute_dtype));
      return cat("op ", op, " has a kernel on device ", device, " for ", dtypes, " but not for dtype ",
                 name(call.compute_dtype));
    case Declined:
      return cat("the kernel for op ", quoted(*kernel_op), kernel_op != call.op ? cat(" (running ", op, ")") : "",
                 " on device ", device, " (", provider, ") declined this ", name(call.compute_dtype),
                 " call: ", reason);
    case NoKernel:
    case None: break;
  }
  return cat("op ", op, " has no kernel on device ", device,
             f ? cat(" (nor has its functional form ", quoted(*f), ")") : "");
}

void run_fallback(OpCall& call, const KernelEntry* boxed, const NativeMiss& why) {
  const int slot = call.device.type;
  const char* where = boxed ? "the device's boxed fallback" : "the CPU";
  switch (fallback_policy()) {
    case FallbackPolicy::Error:
      throw Error(ErrorKind::Unsupported,
                  cat(why.describe(call), "; LOOM_FALLBACK=error forbids running it on ", where,
                      " (LOOM_FALLBACK=warn or allow permits it)"));
    case FallbackPolicy::Warn:
      if (!warned_once(call, why.kind))
        std::cerr << "loom: warning: " << why.describe(call) << "; running it on " << where
                  << (boxed ? "" : " (copying arguments)")
                  << " (shown once per op, device and dtype; LOOM_FALLBACK=allow silences this)\n";
      break;
    case FallbackPolicy::Allow: break;
  }
  call.op->count_fallback(slot);
  if (!boxed) {
    cpu_fallback(call);
    return;
  }
  allocate_outputs(call);
  if (LoomError* err = invoke_kernel(*boxed, call, "boxed fallback"))
    throw_abi_error(err, cat(call.op->name(), " on ", call.device.str(), " (fallback of ",
                             boxed->provider, ")"));
}

void throw_no_native(const OpCall& call, const NativeMiss& why) {
  std::string where;
  for (const auto& name : device_type_names()) {
    const int s = find_device_type_slot(name);
    if (call.op->kernel(s)) where += (where.empty() ? "" : ", ") + name;
  }
  throw Error(why.kind == NativeMiss::Declined ? ErrorKind::Unsupported : ErrorKind::NotFound,
              cat(why.describe(call), "; it has no composite and '", call.device.type_name(),
                  "' no fallback; op ", quoted(*call.op), " has kernels for: ",
                  where.empty() ? "(no device)" : where));
}

}  // namespace loom::detail

namespace loom {

// ---- fallback policy and counters -------------------------------------------------

namespace {
std::atomic<int> g_policy{-1};

FallbackPolicy policy_from_env() {
  const char* v = std::getenv("LOOM_FALLBACK");
  if (!v || !*v) return FallbackPolicy::Allow;
  std::string s(v);
  if (s == "allow") return FallbackPolicy::Allow;
  if (s == "warn") return FallbackPolicy::Warn;
  if (s == "error") return FallbackPolicy::Error;
  std::cerr << "loom: ignoring LOOM_FALLBACK='" << s << "' (expected allow, warn or error)\n";
  return FallbackPolicy::Allow;
}
}  // namespace

FallbackPolicy fallback_policy() {
  int p = g_policy.load(std::memory_order_relaxed);
  if (p < 0) {
    p = static_cast<int>(policy_from_env());
    g_policy.store(p, std::memory_order_relaxed);
  }
  return static_cast<FallbackPolicy>(p);
}

void set_fallback_policy(FallbackPolicy p) { g_policy.store(static_cast<int>(p)); }

uint64_t fallback_count(const std::string& op, const std::string& device_type) {
  const OpDef* def = Dispatcher::instance().find(op);
  const int slot = find_device_type_slot(device_type);
  if (!def || slot < 0) return 0;
  return def->fallback_count(slot);
}

std::vector<FallbackRecord> fallback_counts() {
  std::vector<FallbackRecord> out;
  const auto types = device_type_names();
  for (const OpDef* op : Dispatcher::instance().ops())
    for (size_t slot = 0; slot < types.size(); ++slot)
      if (uint64_t n = op->fallback_count(static_cast<int>(slot)))
        out.push_back({op->name(), types[slot], n});
  return out;
}

}  // namespace loom
