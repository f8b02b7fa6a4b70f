// fusion.cpp — a device's fused_* slots (loom/fusion.h).
#include "current_stream.h"
#include "device_registry.h"
#include "plugin_call.h"

#include <loom/error.h>
#include <loom/fusion.h>
#include <loom/op_call.h>
#include <loom/plugin/fused_ops.hpp>

#include <cstring>

namespace loom::fusion {
namespace {

using detail::cat;

std::string where(const LoomFusedRegion& r, int32_t i) {
  return cat("fused region instruction ", i, r.text ? cat(" of\n", r.text) : std::string());
}

// A malformed region is the caller's bug (loom.jit or a test): an error
// before any plugin sees it.
void check_region(const LoomFusedRegion& r) {
  LOOM_CHECK(r.struct_size >= sizeof(LoomFusedRegion), "fused region: struct_size ", r.struct_size, " is below ",
             sizeof(LoomFusedRegion));
  LOOM_CHECK(r.num_instrs > 0 && r.instrs, "fused region: no instructions");
  LOOM_CHECK(r.num_outputs > 0 && r.outputs, "fused region: no outputs");
  LOOM_CHECK(r.num_inputs >= 0, "fused region: negative input count ", r.num_inputs);
  for (int32_t i = 0; i < r.num_instrs; ++i) {
    const LoomFusedInstr& in = r.instrs[i];
    LOOM_CHECK(in.dtype >= 0 && in.dtype < LOOM_DTYPE_COUNT && in.compute_dtype >= 0 &&
                   in.compute_dtype < LOOM_DTYPE_COUNT,
               where(r, i), ": invalid dtype code ", in.dtype, " / ", in.compute_dtype);
    LOOM_CHECK(in.num_values >= 0 && (in.num_values == 0 || in.values), where(r, i), ": ", in.num_values,
               " values but no array");
    if (in.op == LOOM_FUSED_INPUT) {
      LOOM_CHECK(in.num_args == 0 && in.args[0] >= 0 && in.args[0] < r.num_inputs, where(r, i),
                 ": input index ", in.args[0], " is outside the region's ", r.num_inputs, " inputs");
      continue;
    }
    LOOM_CHECK(in.op == LOOM_FUSED_CAST || op_name(in.op), where(r, i), ": unknown op code ", in.op);
    LOOM_CHECK(in.num_args >= 1 && in.num_args <= 3 && (in.op != LOOM_FUSED_CAST || in.num_args == 1), where(r, i),
               ": ", in.num_args, " arguments");
    for (int32_t a = 0; a < in.num_args; ++a)
      LOOM_CHECK(in.args[a] >= 0 && in.args[a] < i, where(r, i), ": argument ", a, " reads instruction ",
                 in.args[a], ", which does not come before it");
  }
  for (int32_t k = 0; k < r.num_outputs; ++k)
    LOOM_CHECK(r.outputs[k] >= 0 && r.outputs[k] < r.num_instrs, "fused region: output ", k,
               " names instruction ", r.outputs[k], " of ", r.num_instrs);
}

}  // namespace

const char* op_name(int32_t code) { return plugin::fused_op_name(code); }

int32_t op_code(std::string_view op) { return plugin::fused_op_code(op); }

std::string listing(const LoomFusedRegion& r) {
  std::string s;
  for (int32_t i = 0; i < r.num_instrs; ++i) {
    const LoomFusedInstr& in = r.instrs[i];
    s += cat("  %", i, " : ", in.dtype >= 0 && in.dtype < LOOM_DTYPE_COUNT ? name(static_cast<DType>(in.dtype)) : "?",
             " = ");
    if (in.op == LOOM_FUSED_INPUT) {
      s += cat("input ", in.args[0], "\n");
      continue;
    }
    s += in.op == LOOM_FUSED_CAST ? "cast" : (op_name(in.op) ? op_name(in.op) : "?");
    s += "(";
    for (int32_t a = 0; a < in.num_args && a < 3; ++a) s += cat(a ? ", %" : "%", in.args[a]);
    for (int32_t v = 0; v < in.num_values; ++v) {
      const LoomValue& x = in.values[v];
      s += ", ";
      if (x.kind == LOOM_VALUE_FLOAT) s += cat(x.u.f);
      else if (x.kind == LOOM_VALUE_INT || x.kind == LOOM_VALUE_BOOL) s += cat(x.u.i);
      else if (x.kind == LOOM_VALUE_STRING) s += "'" + std::string(x.u.str.data, static_cast<size_t>(x.u.str.size)) + "'";
      else if (x.kind == LOOM_VALUE_NONE) s += "None";
      else s += "...";
    }
    s += ")\n";
  }
  s += "  return (";
  for (int32_t k = 0; k < r.num_outputs; ++k) s += cat(k ? ", %" : "%", r.outputs[k]);
  return s + ")\n";
}

Compiled compile(Device device, const LoomFusedRegion& region) {
  check_region(region);
  const detail::DeviceTypeEntry& e = detail::device_type(device.type);
  Compiled out;
  if (!e.desc.fused_compile) {
    out.declined = cat("device type '", e.name, "' (", e.plugin, ") has no fused_* slots");
    return out;
  }
  void* handle = nullptr;
  if (LoomError* err = LOOM_DEVICE_SLOT(e, fused_compile, device.index, &region, &handle)) {
    if (err->code != LOOM_STATUS_UNSUPPORTED)
      detail::throw_abi_error(err, cat("compiling a fused region on ", device.str(), " (", e.plugin, ")"));
    out.declined = err->message ? err->message : "(no message)";
    if (err->destroy) err->destroy(err);
    return out;
  }
  LOOM_CHECK(handle, "fused_compile of ", device.str(), " (", e.plugin, ") returned no kernel and no error");
  std::vector<DType> ins(static_cast<size_t>(region.num_inputs), DType::Float32), outs;
  for (int32_t i = 0; i < region.num_instrs; ++i)
    if (region.instrs[i].op == LOOM_FUSED_INPUT)
      ins[static_cast<size_t>(region.instrs[i].args[0])] = static_cast<DType>(region.instrs[i].dtype);
  for (int32_t k = 0; k < region.num_outputs; ++k)
    outs.push_back(static_cast<DType>(region.instrs[region.outputs[k]].dtype));
  out.kernel = std::make_shared<const Kernel>(device.type, device, handle, std::move(ins), std::move(outs));
  return out;
}

Kernel::Kernel(int device_type, Device device, void* handle, std::vector<DType> inputs, std::vector<DType> outputs)
    : slot_(device_type), device_(device), handle_(handle), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}

Kernel::~Kernel() {
  const detail::DeviceTypeEntry& e = detail::device_type(slot_);
  LOOM_DEVICE_SLOT_NOTHROW(e, fused_release, handle_);
}

std::vector<Tensor> Kernel::run(const std::vector<const Tensor*>& inputs) const {
  LOOM_CHECK(inputs.size() == inputs_.size(), "fused region: takes ", inputs_.size(), " input(s), got ",
             inputs.size());
  DimVector shape;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    LOOM_CHECK(t.defined(), "fused region: input ", i, " is an undefined tensor");
    LOOM_CHECK(t.dtype() == inputs_[i], "fused region: input ", i, " is ", name(t.dtype()), ", the region reads ",
               name(inputs_[i]));
    LOOM_CHECK(t.device() == device_, "fused region: input ", i, " is on ", t.device().str(),
               ", the region was compiled for ", device_.str());
    shape = i ? broadcast_shapes("fused region", shape, t.sizes()) : DimVector(t.sizes());
  }
  std::vector<Tensor> outs;
  for (DType d : outputs_) outs.push_back(detail::empty_contiguous(device_, d, shape));
  std::vector<DimVector> strides;
  strides.reserve(inputs.size());
  std::vector<LoomTensorDesc> in(inputs.size()), out(outs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    strides.push_back(broadcast_strides(inputs[i]->sizes(), inputs[i]->strides(), shape));
    in[i] = inputs[i]->impl()->desc();
    in[i].ndim = static_cast<int32_t>(shape.size());
    in[i].shape = shape.data();
    in[i].strides = strides.back().data();
  }
  for (size_t k = 0; k < outs.size(); ++k) out[k] = outs[k].impl()->desc();
  const detail::DeviceTypeEntry& e = detail::device_type(slot_);
  if (LoomError* err = LOOM_DEVICE_SLOT(e, fused_run, device_.index, handle_, in.data(),
                                        static_cast<int32_t>(in.size()), out.data(),
                                        static_cast<int32_t>(out.size()), detail::current_stream_handle(device_)))
    detail::throw_abi_error(err, cat("running a fused region on ", device_.str(), " (", e.plugin, ")"));
  return outs;
}

}  // namespace loom::fusion
