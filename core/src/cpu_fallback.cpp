// cpu_fallback.cpp — the fallback every non-CPU device has by default:
// copy tensor arguments to CPU, run the op there, copy outputs and mutated
// arguments back. Copies keep each tensor's layout (storage span), so a
// broadcast or strided argument costs only the bytes it covers.
#include "device_registry.h"
#include "transfer.h"

#include <loom/error.h>
#include <loom/op_call.h>

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

}  // namespace loom::detail
