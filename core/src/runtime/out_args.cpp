// out_args.cpp — out= arguments (torch.add(a, b, out=c)) for every op.
//
// After prepare, each out tensor is checked (device, castable dtype) and
// resized to its output's shape. The kernel then writes straight into it when
// it can — same dtype, the layout the kernel expects, and no memory shared
// with an input (a kernel may read an input after writing the output) —
// otherwise the result is computed as usual and copied (and cast) into it.
#include <loom/error.h>
#include <loom/op_call.h>

namespace loom::detail {
namespace {

bool shares_memory_with_inputs(const OpCall& call, const Tensor& out) {
  const StorageImpl* s = out.storage().get();
  for (const Tensor* a : call.args)
    if (a && a->defined() && a->storage().get() == s) return true;
  return false;
}

}  // namespace

void bind_out_args(OpCall& call) {
  const std::string& op = call.op->name();
  LOOM_CHECK(call.out_args.size() <= call.outputs.size(), op, ": got ", call.out_args.size(),
             " out= tensors for ", call.outputs.size(), " output(s)");
  for (size_t i = 0; i < call.out_args.size(); ++i) {
    Tensor* out = call.out_args[i];
    if (!out) continue;
    LOOM_CHECK(out->defined(), op, ": out= tensor ", i, " is undefined");
    OutputPlan& plan = call.outputs[i];
    LOOM_CHECK(out->device() == call.device, op, ": expected out= tensor on ", call.device.str(),
               " like the inputs, but it is on ", out->device().str());
    LOOM_CHECK(can_cast(plan.dtype, out->dtype()), op, ": result type ", name(plan.dtype),
               " can't be cast to the desired output type ", name(out->dtype()));
    if (!(out->sizes() == IntArrayRef(plan.sizes))) out->impl()->resize_contiguous(plan.sizes);
    // A kernel view is computed for a fresh row-major output; other layouts
    // go through a temporary.
    const bool layout_ok = !plan.kernel_view || out->is_contiguous();
    if (out->dtype() == plan.dtype && layout_ok && !shares_memory_with_inputs(call, *out))
      plan.result = *out;
  }
}

void finish_out_args(OpCall& call) {
  for (size_t i = 0; i < call.out_args.size(); ++i) {
    Tensor* out = call.out_args[i];
    if (!out) continue;
    Tensor& result = call.outputs[i].result;
    if (result.impl() != out->impl()) out->copy_(result);  // copy_ bumps the version
    else out->storage()->bump_version();
    result = *out;
  }
}

}  // namespace loom::detail
