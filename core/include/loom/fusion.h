// loom/fusion.h — offering a fused elementwise region (plugin_api.h's
// LoomFusedRegion) to a device's fused_* slots (ABI 1.4) and running what it
// compiled. loom.jit builds the regions (its `_fused` op); the conformance
// suite checks a plugin's slots through the same calls.
#pragma once

#include <loom/device.h>
#include <loom/plugin_api.h>
#include <loom/tensor.h>

#include <memory>
#include <string>
#include <vector>

namespace loom {
class OpDef;
}

namespace loom::fusion {

// A region one device compiled. The plugin's kernel is released (its
// fused_release slot) when the last copy of the pointer goes.
class Kernel {
 public:
  Kernel(int device_type, Device device, void* handle, std::vector<DType> inputs, std::vector<DType> outputs);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // Runs on `inputs` — on device(), of the region's input dtypes, their
  // shapes broadcastable to one shape (the iteration space) — and returns
  // the outputs: contiguous, of that shape and the region's output dtypes. Throws loom::Error naming
  // the input for a wrong count, dtype or device, and the plugin's error.
  std::vector<Tensor> run(const std::vector<const Tensor*>& inputs) const;

  Device device() const { return device_; }

 private:
  int slot_;
  Device device_;
  void* handle_;
  std::vector<DType> inputs_, outputs_;
};

struct Compiled {
  std::shared_ptr<const Kernel> kernel;  // nullptr when the device declined
  std::string declined;                  // why: the device's message, or that it has no fused_* slots
};

// Builds a region one op at a time. Each op's own prepare, run on
// one-element CPU tensors of its arguments' dtypes and ranks, says which
// dtype its kernel gets each argument in, so the builder inserts the CASTs
// eager promotion makes and the region computes what the ops compute one
// by one (run_reference).
class RegionBuilder {
 public:
  RegionBuilder() = default;
  RegionBuilder(const RegionBuilder&) = delete;
  RegionBuilder& operator=(const RegionBuilder&) = delete;

  // The next region input, of `dtype` and `rank` dimensions; returns its
  // instruction. `wrapped_number`: a 0-d input that stands for a number the
  // program passed (x * 2.5), which promotes by category only
  // (Tensor::is_wrapped_number).
  int32_t input(DType dtype, int64_t rank, bool wrapped_number = false);
  // `op` (a catalog op of LOOM_FUSED_OP_LIST) over earlier instructions, with
  // its non-tensor arguments in schema order (copied). Throws loom::Error
  // when the op cannot be in a region or its prepare rejects these dtypes.
  int32_t add(const OpDef& op, const std::vector<int32_t>& args, const std::vector<LoomValue>& values);
  // `arg` converted to `dtype` (an instruction only where the dtype differs).
  int32_t cast(int32_t arg, DType dtype);
  void output(int32_t instr);

  DType dtype(int32_t instr) const;
  size_t num_inputs() const { return input_count_; }
  size_t size() const { return instrs_.size(); }

  // The region; valid until the builder changes or goes. `text` is kept for
  // messages (LoomFusedRegion.text).
  const LoomFusedRegion& region(std::string text = "");
  // The instructions op by op through the dispatcher, on the inputs'
  // device: what a device's compiled region must give (each output
  // broadcast to the inputs' broadcast shape, the region's iteration space).
  std::vector<Tensor> run_reference(const std::vector<const Tensor*>& inputs) const;

 private:
  struct Owned;  // a value's copied payload
  int32_t push(LoomFusedInstr in, std::vector<LoomValue> values, int64_t rank);
  std::vector<LoomFusedInstr> instrs_;
  std::vector<std::vector<LoomValue>> values_;
  std::vector<std::shared_ptr<Owned>> owned_;
  std::vector<int64_t> ranks_;
  std::vector<bool> wrapped_;
  std::vector<int32_t> outputs_;
  size_t input_count_ = 0;
  std::string text_;
  LoomFusedRegion region_{};
};

// Offers `region` to `device`'s plugin: a kernel, or the reason it declined
// (LOOM_STATUS_UNSUPPORTED, or no fused_* slots). Any other error of the
// plugin is thrown, naming the device. The region is checked first (op
// codes, argument indices, dtypes) and a malformed one is an error.
Compiled compile(Device device, const LoomFusedRegion& region);

// The region's instructions one a line ("%3 : float32 = mul(%1, %2)"),
// for messages when the region carries no text.
std::string listing(const LoomFusedRegion& region);

// The catalog op an op code names ("add" for LOOM_FUSED_ADD); nullptr for
// LOOM_FUSED_INPUT, LOOM_FUSED_CAST and unknown codes.
const char* op_name(int32_t code);
// The code of a catalog op; -1 when a region cannot hold it.
int32_t op_code(std::string_view op);

}  // namespace loom::fusion
