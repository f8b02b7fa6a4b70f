// fusion_region_builder.cpp — building a LoomFusedRegion op by op, and its
// reference run (loom/fusion.h).
#include <loom/error.h>
#include <loom/fusion.h>
#include <loom/op_call.h>
#include <loom/op_registry.h>
#include <loom/ops.h>
#include <loom/plugin/fnv1a.hpp>

#include <cstring>

namespace loom::fusion {

using detail::cat;

// A value's payload, copied so the region does not borrow the caller's.
struct RegionBuilder::Owned {
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::string str;
};

namespace {

// FNV-1a over the instructions and their values (not the text).
struct Hasher {
  uint64_t h = plugin::kFnv1aBasis;
  void bytes(const void* p, size_t n) { h = plugin::fnv1a(std::string_view(static_cast<const char*>(p), n), h); }
  template <class T>
  void pod(const T& v) {
    bytes(&v, sizeof v);
  }
};

LoomFusedInstr blank(int32_t op, DType dtype) {
  LoomFusedInstr in{};
  in.op = op;
  in.dtype = in.compute_dtype = static_cast<int32_t>(dtype);
  in.args[0] = in.args[1] = in.args[2] = -1;
  return in;
}

}  // namespace

int32_t RegionBuilder::push(LoomFusedInstr in, std::vector<LoomValue> values, int64_t rank) {
  in.num_values = static_cast<int32_t>(values.size());
  instrs_.push_back(in);
  values_.push_back(std::move(values));
  ranks_.push_back(rank);
  wrapped_.push_back(false);
  return static_cast<int32_t>(instrs_.size() - 1);
}

int32_t RegionBuilder::input(DType dtype, int64_t rank, bool wrapped_number) {
  LOOM_CHECK(!wrapped_number || rank == 0, "fused region: a wrapped number is 0-d, not ", rank, "-d");
  LOOM_CHECK(instrs_.size() == input_count_, "fused region: inputs come before the ops");
  LoomFusedInstr in = blank(LOOM_FUSED_INPUT, dtype);
  in.args[0] = static_cast<int32_t>(input_count_++);
  const int32_t i = push(in, {}, rank);
  wrapped_[static_cast<size_t>(i)] = wrapped_number;
  return i;
}

DType RegionBuilder::dtype(int32_t instr) const {
  LOOM_CHECK(instr >= 0 && static_cast<size_t>(instr) < instrs_.size(), "fused region: no instruction ", instr);
  return static_cast<DType>(instrs_[static_cast<size_t>(instr)].dtype);
}

int32_t RegionBuilder::cast(int32_t arg, DType to) {
  if (dtype(arg) == to) return arg;
  LoomFusedInstr in = blank(LOOM_FUSED_CAST, to);
  in.num_args = 1;
  in.args[0] = arg;
  return push(in, {}, ranks_[static_cast<size_t>(arg)]);
}

int32_t RegionBuilder::add(const OpDef& op, const std::vector<int32_t>& args, const std::vector<LoomValue>& values) {
  const int32_t code = op_code(op.name());
  LOOM_CHECK(code >= 0, "fused region: '", op.name(), "' is not an op a region can hold (plugin_api.h's LOOM_FUSED_OP_LIST)");
  LOOM_CHECK(op.prepare(), "fused region: '", op.name(), "' has no prepare function");
  LOOM_CHECK(!args.empty() && args.size() <= 3, "fused region: '", op.name(), "' with ", args.size(), " tensor arguments");
  std::vector<Tensor> probes;
  int64_t rank = 0;
  for (int32_t a : args) {
    (void)dtype(a);  // checks the index
    const int64_t r = ranks_[static_cast<size_t>(a)];
    rank = std::max(rank, r);
    // Zeros, not empty: prepare may cast a probe, which reads it.
    probes.push_back(zeros(DimVector(static_cast<size_t>(r), 1), dtype(a)));
    if (wrapped_[static_cast<size_t>(a)]) const_cast<TensorImpl*>(probes.back().impl())->set_wrapped_number(true);
  }
  OpCall call(op);
  call.device = cpu_device();
  for (const Tensor& t : probes) call.args.push_back(&t);
  for (const LoomValue& v : values) call.values.push_back(v);
  op.prepare()(call);
  LOOM_CHECK(call.outputs.size() == 1, "fused region: '", op.name(), "' has ", call.outputs.size(), " results");
  LoomFusedInstr in = blank(code, call.outputs[0].dtype);
  in.compute_dtype = static_cast<int32_t>(call.compute_dtype);
  in.num_args = static_cast<int32_t>(args.size());
  for (size_t k = 0; k < args.size(); ++k) {
    const bool given = k < call.inputs.size() && call.inputs[k].tensor;
    in.args[k] = given ? cast(args[k], call.inputs[k].tensor->dtype()) : args[k];
  }
  // The values as prepare left them (defaults resolved), with their
  // payloads copied.
  std::vector<LoomValue> kept;
  for (const LoomValue& v : call.values) {
    LoomValue c = v;
    auto owned = std::make_shared<Owned>();
    if (v.kind == LOOM_VALUE_INT_LIST) {
      owned->ints.assign(v.u.ints.data, v.u.ints.data + v.u.ints.size);
      c.u.ints.data = owned->ints.data();
    } else if (v.kind == LOOM_VALUE_FLOAT_LIST) {
      owned->floats.assign(v.u.floats.data, v.u.floats.data + v.u.floats.size);
      c.u.floats.data = owned->floats.data();
    } else if (v.kind == LOOM_VALUE_STRING) {
      owned->str.assign(v.u.str.data, static_cast<size_t>(v.u.str.size));
      c.u.str.data = owned->str.data();
    } else if (v.kind != LOOM_VALUE_NONE && v.kind != LOOM_VALUE_BOOL && v.kind != LOOM_VALUE_INT &&
               v.kind != LOOM_VALUE_FLOAT && v.kind != LOOM_VALUE_DTYPE) {
      throw Error(cat("fused region: '", op.name(), "' takes a value of kind ", v.kind, ", which a region cannot carry"));
    }
    owned_.push_back(std::move(owned));
    kept.push_back(c);
  }
  return push(in, std::move(kept), rank);
}

void RegionBuilder::output(int32_t instr) {
  (void)dtype(instr);
  outputs_.push_back(instr);
}

const LoomFusedRegion& RegionBuilder::region(std::string text) {
  for (size_t i = 0; i < instrs_.size(); ++i) instrs_[i].values = values_[i].empty() ? nullptr : values_[i].data();
  text_ = std::move(text);
  Hasher h;
  h.pod(input_count_);
  for (size_t i = 0; i < instrs_.size(); ++i) {
    const LoomFusedInstr& in = instrs_[i];
    h.pod(in.op), h.pod(in.dtype), h.pod(in.compute_dtype), h.pod(in.num_args);
    for (int a = 0; a < 3; ++a) h.pod(in.args[a]);
    for (const LoomValue& v : values_[i]) {
      h.pod(v.kind);
      if (v.kind == LOOM_VALUE_STRING) h.bytes(v.u.str.data, static_cast<size_t>(v.u.str.size));
      else if (v.kind == LOOM_VALUE_FLOAT) h.pod(v.u.f);
      else if (v.kind == LOOM_VALUE_INT_LIST) h.bytes(v.u.ints.data, sizeof(int64_t) * static_cast<size_t>(v.u.ints.size));
      else if (v.kind == LOOM_VALUE_FLOAT_LIST) h.bytes(v.u.floats.data, sizeof(double) * static_cast<size_t>(v.u.floats.size));
      else h.pod(v.u.i);
    }
  }
  for (int32_t o : outputs_) h.pod(o);
  region_ = LoomFusedRegion{};
  region_.struct_size = sizeof region_;
  region_.hash = h.h;
  region_.num_inputs = static_cast<int32_t>(input_count_);
  region_.num_instrs = static_cast<int32_t>(instrs_.size());
  region_.instrs = instrs_.data();
  region_.num_outputs = static_cast<int32_t>(outputs_.size());
  region_.outputs = outputs_.data();
  region_.text = text_.c_str();
  return region_;
}

std::vector<Tensor> RegionBuilder::run_reference(const std::vector<const Tensor*>& inputs) const {
  LOOM_CHECK(inputs.size() == input_count_, "fused region: takes ", input_count_, " input(s), got ", inputs.size());
  std::vector<Tensor> env(instrs_.size());
  for (size_t i = 0; i < instrs_.size(); ++i) {
    const LoomFusedInstr& in = instrs_[i];
    if (in.op == LOOM_FUSED_INPUT) {
      env[i] = *inputs[static_cast<size_t>(in.args[0])];
      continue;
    }
    if (in.op == LOOM_FUSED_CAST) {
      env[i] = env[static_cast<size_t>(in.args[0])].to(static_cast<DType>(in.dtype));
      continue;
    }
    const OpDef* op = Dispatcher::instance().find(op_name(in.op));
    LOOM_CHECK(op, "fused region: op '", op_name(in.op), "' is not in the catalog");
    OpCall call(*op);
    for (int32_t a = 0; a < in.num_args; ++a) call.args.push_back(&env[static_cast<size_t>(in.args[a])]);
    for (const LoomValue& v : values_[i]) call.values.push_back(v);
    dispatch(call);
    env[i] = std::move(call.outputs[0].result);
  }
  // Every output spans the iteration space: the inputs' broadcast shape.
  DimVector shape;
  for (size_t i = 0; i < inputs.size(); ++i)
    shape = i ? broadcast_shapes("fused region", shape, inputs[i]->sizes()) : DimVector(inputs[i]->sizes());
  std::vector<Tensor> out;
  for (int32_t o : outputs_) out.push_back(env[static_cast<size_t>(o)].expand(shape).contiguous());
  return out;
}

}  // namespace loom::fusion
