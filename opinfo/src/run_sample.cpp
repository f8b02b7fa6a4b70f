// run_sample.cpp — a Sample as a boxed OpCall (see loom/opinfo.h).
#include <loom/error.h>
#include <loom/op_call.h>
#include <loom/opinfo.h>
#include <loom/schema_defaults.h>

namespace loom::opinfo {
namespace {

// The LoomValue for one sample value; borrows from `v`.
LoomValue to_loom_value(const Value& v) {
  LoomValue out{};
  std::visit(
      [&out](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          out.kind = LOOM_VALUE_NONE;
        } else if constexpr (std::is_same_v<T, bool>) {
          out.kind = LOOM_VALUE_BOOL;
          out.u.i = x ? 1 : 0;
        } else if constexpr (std::is_same_v<T, int64_t>) {
          out.kind = LOOM_VALUE_INT;
          out.u.i = x;
        } else if constexpr (std::is_same_v<T, double>) {
          out.kind = LOOM_VALUE_FLOAT;
          out.u.f = x;
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          out.kind = LOOM_VALUE_INT_LIST;
          out.u.ints.data = x.data();
          out.u.ints.size = static_cast<int64_t>(x.size());
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          out.kind = LOOM_VALUE_FLOAT_LIST;
          out.u.floats.data = x.data();
          out.u.floats.size = static_cast<int64_t>(x.size());
        } else if constexpr (std::is_same_v<T, std::string>) {
          out.kind = LOOM_VALUE_STRING;
          out.u.str.data = x.data();
          out.u.str.size = static_cast<int64_t>(x.size());
        } else if constexpr (std::is_same_v<T, DType>) {
          out.kind = LOOM_VALUE_DTYPE;
          out.u.i = static_cast<int64_t>(x);
        } else if constexpr (std::is_same_v<T, TensorCount>) {
          out.kind = LOOM_VALUE_TENSOR_LIST;
          out.u.i = x.n;
        }
      },
      v);
  return out;
}

const char* kind_name(int kind) {
  static const char* const names[] = {"None", "bool", "int", "float", "int[]", "float[]", "str", "dtype", "Device", "Tensor[]"};
  return kind >= 0 && kind < 10 ? names[kind] : "unknown";
}

// Whether a LoomValue of `kind` fits argument `a` (after the int -> float
// conversion below).
bool fits(const Argument& a, int kind) {
  if (kind == LOOM_VALUE_NONE) return a.optional;
  switch (a.type) {
    case ArgType::Scalar: return kind == LOOM_VALUE_BOOL || kind == LOOM_VALUE_INT || kind == LOOM_VALUE_FLOAT;
    case ArgType::Int: return kind == LOOM_VALUE_INT;
    case ArgType::Float: return kind == LOOM_VALUE_FLOAT;
    case ArgType::Bool: return kind == LOOM_VALUE_BOOL;
    case ArgType::IntList: return kind == LOOM_VALUE_INT_LIST;
    case ArgType::FloatList: return kind == LOOM_VALUE_FLOAT_LIST;
    case ArgType::Str: return kind == LOOM_VALUE_STRING;
    case ArgType::ScalarType: return kind == LOOM_VALUE_DTYPE;
    case ArgType::TensorList: return kind == LOOM_VALUE_TENSOR_LIST;
    default: return false;  // Device, Generator: only None
  }
}

// The LoomValue for sample value `v` of argument `a`. An int given for a
// `float` argument becomes a float, as the Python binding does; any other
// mismatch is the sample's error (a kernel would read the wrong union member).
LoomValue argument_value(const OpDef& op, const Sample& sample, const Argument& a, const Value& v) {
  LoomValue out = to_loom_value(v);
  if (a.type == ArgType::Float && out.kind == LOOM_VALUE_INT) {
    out.kind = LOOM_VALUE_FLOAT;
    out.u.f = static_cast<double>(out.u.i);
  }
  LOOM_CHECK(fits(a, out.kind), op.name(), ": sample '", sample.label, "' gives a value of kind ", kind_name(out.kind),
             " for argument '", a.name, "' of type ", arg_type_name(a.type), a.optional ? "?" : "");
  return out;
}

// Trailing Tensor? arguments the sample leaves off (linear's bias) become
// None, as trailing values take their defaults: the ops' prepare functions
// index call.args by schema position.
void pad_absent_tensors(const OpDef& op, const Sample& sample, OpCall& call) {
  size_t expected = 0;
  for (const Argument& a : op.schema().args) expected += a.type == ArgType::Tensor;
  for (const Value& v : sample.values)
    if (const auto* n = std::get_if<TensorCount>(&v)) expected += static_cast<size_t>(n->n);  // the Tensor[] elements
  LOOM_CHECK(call.args.size() <= expected, op.name(), ": sample '", sample.label, "' gives ", call.args.size(),
             " tensors but the schema takes ", expected);
  size_t missing = expected - call.args.size();
  for (auto a = op.schema().args.rbegin(); missing > 0 && a != op.schema().args.rend(); ++a) {
    if (a->type != ArgType::Tensor) continue;
    LOOM_CHECK(a->optional, op.name(), ": sample '", sample.label, "' gives no tensor for argument '", a->name,
               "', which is not optional");
    call.args.push_back(nullptr);
    --missing;
  }
}

}  // namespace

std::vector<Tensor> run_sample(const OpDef& op, const Sample& sample, const RunOptions& options) {
  const auto& tensors = options.tensors ? *options.tensors : sample.tensors;
  OpCall call(op);
  for (const auto& t : tensors) call.args.push_back(t ? &*t : nullptr);
  pad_absent_tensors(op, sample, call);
  size_t value_index = 0;
  for (const Argument& a : op.schema().args) {
    if (a.type == ArgType::Tensor) continue;
    if (value_index < sample.values.size()) {
      call.values.push_back(argument_value(op, sample, a, sample.values[value_index++]));
      continue;
    }
    LOOM_CHECK(a.default_text.has_value(), op.name(), ": sample '", sample.label, "' gives no value for argument '",
               a.name, "', which has no default");
    call.values.push_back(default_value_of(a));
  }
  LOOM_CHECK(value_index == sample.values.size(), op.name(), ": sample '", sample.label, "' gives ",
             sample.values.size(), " values but the schema has only ", value_index, " non-tensor arguments");
  for (Tensor* o : options.out) call.out_args.push_back(o);
  dispatch(call);
  std::vector<Tensor> results;
  for (auto& plan : call.outputs) results.push_back(plan.result);
  return results;
}

}  // namespace loom::opinfo
