// ops_py.cpp — every op of the catalog, callable from Python by its schema.
//
// `_C._dispatch("sum", args, kwargs)` tries each overload of "sum" (sum,
// sum.dim_IntList, ...) in definition order, binding positional and keyword
// arguments to the schema as PyTorch's argument parser does: numbers where a
// Tensor is expected become wrapped numbers, an int where int[] is expected
// becomes a one-element list, defaults fill what is missing. The first
// overload that binds runs; if none does, the TypeError lists every
// signature. loom/__init__.py generates loom.<op> and Tensor.<op> from
// `_C._ops()`, so an op defined in C++ (or by a plugin) appears in Python
// with no binding code.
#include "convert.h"
#include "ops_py.h"

#include <loom/op_call.h>
#include <loom/schema.h>
#include <loom/schema_defaults.h>

#include <forward_list>
#include <map>
#include <mutex>

namespace loom::python {
namespace {

// What an OpCall borrows from while it runs.
// forward_list: stable addresses, and no allocation while empty (a deque
// allocates on construction, which showed up per call).
struct Keep {
  std::forward_list<Tensor> tensors;  // wrapped numbers
  std::forward_list<std::vector<int64_t>> ints;
  std::forward_list<std::vector<double>> floats;
  std::forward_list<std::string> strings;
};

struct Mismatch {
  std::string why;
};

LoomValue int_value(int64_t i) {
  LoomValue v{};
  v.kind = LOOM_VALUE_INT;
  v.u.i = i;
  return v;
}

bool is_int_like(py::handle h) { return !PyFloat_Check(h.ptr()) && PyIndex_Check(h.ptr()) && !is_tensor(h); }

// One non-tensor argument from Python.
LoomValue value_of(const Argument& a, py::handle h, Keep& keep) {
  if (h.is_none()) {
    if (!a.optional) throw Mismatch{"'" + a.name + "' may not be None"};
    return LoomValue{};
  }
  LoomValue v{};
  switch (a.type) {
    case ArgType::Scalar:
      if (!is_number(h) && !(is_tensor(h) && as_tensor(h).numel() == 1))
        throw Mismatch{"'" + a.name + "' must be a number, not " + type_name(h)};
      return to_scalar(h, a.name.c_str()).abi();
    case ArgType::Int:
      if (!is_int_like(h)) throw Mismatch{"'" + a.name + "' must be an int, not " + type_name(h)};
      return int_value(py::int_(py::reinterpret_borrow<py::object>(h)).cast<int64_t>());
    case ArgType::Float:
      if (!is_number(h)) throw Mismatch{"'" + a.name + "' must be a float, not " + type_name(h)};
      v.kind = LOOM_VALUE_FLOAT;
      v.u.f = py::float_(py::reinterpret_borrow<py::object>(h)).cast<double>();
      return v;
    case ArgType::Bool:
      if (!PyBool_Check(h.ptr())) throw Mismatch{"'" + a.name + "' must be a bool, not " + type_name(h)};
      v.kind = LOOM_VALUE_BOOL;
      v.u.i = h.ptr() == Py_True;
      return v;
    case ArgType::IntList: {
      std::vector<int64_t> list;
      if (is_int_like(h)) {
        list.assign(a.list_size > 0 ? static_cast<size_t>(a.list_size) : 1,
                    py::int_(py::reinterpret_borrow<py::object>(h)).cast<int64_t>());
      } else if (PySequence_Check(h.ptr()) && !py::isinstance<py::str>(h) && !is_tensor(h)) {
        for (py::handle x : py::reinterpret_borrow<py::sequence>(h)) {
          if (!is_int_like(x)) throw Mismatch{"'" + a.name + "' must be a sequence of ints, but holds a " + type_name(x)};
          list.push_back(py::int_(py::reinterpret_borrow<py::object>(x)).cast<int64_t>());
        }
      } else {
        throw Mismatch{"'" + a.name + "' must be an int or a sequence of ints, not " + type_name(h)};
      }
      keep.ints.push_front(std::move(list));
      v.kind = LOOM_VALUE_INT_LIST;
      v.u.ints.data = keep.ints.front().data();
      v.u.ints.size = static_cast<int64_t>(keep.ints.front().size());
      return v;
    }
    case ArgType::FloatList: {
      std::vector<double> list;
      if (is_number(h)) list.push_back(py::float_(py::reinterpret_borrow<py::object>(h)).cast<double>());
      else if (PySequence_Check(h.ptr()) && !py::isinstance<py::str>(h))
        for (py::handle x : py::reinterpret_borrow<py::sequence>(h)) {
          if (!is_number(x)) throw Mismatch{"'" + a.name + "' must be a sequence of floats"};
          list.push_back(py::float_(py::reinterpret_borrow<py::object>(x)).cast<double>());
        }
      else throw Mismatch{"'" + a.name + "' must be a sequence of floats, not " + type_name(h)};
      keep.floats.push_front(std::move(list));
      v.kind = LOOM_VALUE_FLOAT_LIST;
      v.u.floats.data = keep.floats.front().data();
      v.u.floats.size = static_cast<int64_t>(keep.floats.front().size());
      return v;
    }
    case ArgType::Str:
      if (!py::isinstance<py::str>(h)) throw Mismatch{"'" + a.name + "' must be a str, not " + type_name(h)};
      keep.strings.push_front(h.cast<std::string>());
      v.kind = LOOM_VALUE_STRING;
      v.u.str.data = keep.strings.front().data();
      v.u.str.size = static_cast<int64_t>(keep.strings.front().size());
      return v;
    case ArgType::ScalarType:
      if (!py::isinstance<PyDType>(h)) throw Mismatch{"'" + a.name + "' must be a loom.dtype, not " + type_name(h)};
      v.kind = LOOM_VALUE_DTYPE;
      v.u.i = static_cast<int64_t>(h.cast<PyDType>().value);
      return v;
    case ArgType::Device:
      if (!py::isinstance<py::str>(h) && !py::isinstance<Device>(h))
        throw Mismatch{"'" + a.name + "' must be a device, not " + type_name(h)};
      v.kind = LOOM_VALUE_DEVICE;
      v.u.device = to_device(h).abi();
      return v;
    case ArgType::Generator:
      if (!py::isinstance<Generator>(h))
        throw Mismatch{"'" + a.name + "' must be a loom.Generator or None, not " + type_name(h)};
      // The Python object (alive for the call) holds the Generator.
      return detail::generator_value(&h.cast<const Generator&>());
    default: break;
  }
  throw Mismatch{"'" + a.name + "' has an unsupported type"};
}

// Binds args/kwargs to `op`'s schema in `call`, or throws Mismatch.
void bind(const OpDef& op, const py::tuple& args, const py::dict& kwargs, OpCall& call, Keep& keep) {
  const Schema& s = op.schema();
  const size_t n = s.args.size();
  std::vector<py::handle> given(n);
  size_t positional = 0;
  for (const Argument& a : s.args) {
    if (a.kwarg_only) break;
    ++positional;
  }
  if (args.size() > positional)
    throw Mismatch{"takes " + std::to_string(positional) + " positional arguments but " +
                   std::to_string(args.size()) + " were given"};
  for (size_t i = 0; i < args.size(); ++i) given[i] = args[i];
  for (const auto& [key, value] : kwargs) {
    const std::string k = py::str(key);
    if (k == "out") continue;
    size_t i = 0;
    while (i < n && s.args[i].name != k) ++i;
    if (i == n) throw Mismatch{"got an unexpected keyword argument '" + k + "'"};
    if (given[i]) throw Mismatch{"got multiple values for argument '" + k + "'"};
    given[i] = value;
  }
  // The device a number passed for a Tensor takes: the first tensor's.
  std::optional<Device> device;
  for (size_t i = 0; i < n && !device; ++i)
    if (given[i] && is_tensor(given[i])) device = as_tensor(given[i]).device();
  for (size_t i = 0; i < n; ++i) {
    const Argument& a = s.args[i];
    py::handle h = given[i];
    if (a.type == ArgType::Tensor) {
      if (!h || h.is_none()) {
        if (!a.optional) throw Mismatch{"missing the Tensor argument '" + a.name + "'"};
        call.args.push_back(nullptr);
      } else if (is_tensor(h)) {
        call.args.push_back(&as_tensor(h));
      } else if (is_number(h)) {
        keep.tensors.push_front(scalar_tensor(to_scalar(h, a.name.c_str()), device.value_or(cpu_device())));
        call.args.push_back(&keep.tensors.front());
      } else {
        throw Mismatch{"'" + a.name + "' must be a Tensor, not " + type_name(h)};
      }
      continue;
    }
    if (a.type == ArgType::TensorList) {
      if (!h || !PySequence_Check(h.ptr()) || is_tensor(h))
        throw Mismatch{"'" + a.name + "' must be a sequence of Tensors"};
      int64_t count = 0;
      for (py::handle x : py::reinterpret_borrow<py::sequence>(h)) {
        if (!is_tensor(x)) throw Mismatch{"'" + a.name + "' must hold Tensors, not " + type_name(x)};
        call.args.push_back(&as_tensor(x));
        ++count;
      }
      LoomValue v{};
      v.kind = LOOM_VALUE_TENSOR_LIST;
      v.u.i = count;
      call.values.push_back(v);
      continue;
    }
    if (!h) {
      if (!a.default_text && !a.optional) throw Mismatch{"missing the argument '" + a.name + "'"};
      call.values.push_back(default_value_of(a));
      continue;
    }
    call.values.push_back(value_of(a, h, keep));
  }
}

// The overloads of one op name, in definition order, refreshed when the
// catalog grows (a plugin or loom.library may add an overload later).
struct OverloadSet {
  std::string name;
  std::vector<const OpDef*> ops;
  size_t seen = 0;  // Dispatcher::num_ops() when `ops` was gathered
  py::object tuple_type;  // namedtuple for multi-output results, or None

  const std::vector<const OpDef*>& current() {
    const size_t n = Dispatcher::instance().num_ops();
    if (n != seen) {
      ops.clear();
      for (const OpDef* op : Dispatcher::instance().ops())
        if (op->schema().name == name) ops.push_back(op);
      seen = n;
    }
    return ops;
  }
};

// Never freed: the functions made from them live as long as the module.
OverloadSet& overload_set(const std::string& name) {
  static std::map<std::string, OverloadSet*> sets;
  auto& slot = sets[name];
  if (!slot) slot = new OverloadSet{name, {}, 0, py::none()};
  return *slot;
}

py::object results(OpCall& call, const OpDef& op, const py::tuple& args) {
  const Schema& s = op.schema();
  // An in-place op returns its own first argument, the very Python object.
  if (s.is_inplace() && s.returns.size() == 1 && !s.returns[0].alias.empty() && args.size() > 0)
    return py::reinterpret_borrow<py::object>(args[0]);
  if (call.outputs.size() == 1) return py::cast(std::move(call.outputs[0].result));
  py::tuple out(call.outputs.size());
  for (size_t i = 0; i < call.outputs.size(); ++i) out[i] = py::cast(std::move(call.outputs[i].result));
  return out;
}

}  // namespace

py::object dispatch_set(OverloadSet& set, const py::tuple& args, const py::dict& kwargs) {
  const auto& ops = set.current();
  if (ops.empty()) throw py::attribute_error("loom has no op named '" + set.name + "'");
  std::string reasons;
  for (const OpDef* op : ops) {
    OpCall call(*op);
    Keep keep;
    try {
      bind(*op, args, kwargs, call, keep);
    } catch (const Mismatch& m) {
      reasons += "\n  " + op->schema().text + "\n      (" + m.why + ")";
      continue;
    }
    if (kwargs.size() && kwargs.contains("out") && !kwargs["out"].is_none()) {
      py::handle o = kwargs["out"];
      if (!is_tensor(o)) throw py::type_error(set.name + "(): 'out' must be a Tensor, not " + type_name(o));
      call.out_args.push_back(const_cast<Tensor*>(&as_tensor(o)));
      dispatch(call);
      return py::reinterpret_borrow<py::object>(o);
    }
    dispatch(call);
    py::object r = results(call, *op, args);
    if (!set.tuple_type.is_none() && PyTuple_CheckExact(r.ptr())) return set.tuple_type(*r);
    return r;
  }
  std::string got;
  for (size_t i = 0; i < args.size(); ++i) got += (i ? ", " : "") + type_name(args[i]);
  for (const auto& [k, v] : kwargs) got += (got.empty() ? "" : ", ") + std::string(py::str(k)) + "=" + type_name(v);
  throw py::type_error(set.name + "() received an invalid combination of arguments - got (" + got +
                       "), but expected one of:" + reasons);
}

py::object dispatch_op(const std::string& name, const py::tuple& args, const py::dict& kwargs) {
  return dispatch_set(overload_set(name), args, kwargs);
}

py::list op_table() {
  py::list out;
  for (const OpDef* op : Dispatcher::instance().ops()) {
    const Schema& s = op->schema();
    const bool method = !s.args.empty() && s.args[0].type == ArgType::Tensor && s.args[0].name == "self";
    py::list returns;
    for (const Argument& r : s.returns) returns.append(r.name);
    out.append(py::make_tuple(s.name, s.overload, s.text, method, s.is_inplace(), returns));
  }
  return out;
}

void bind_ops(py::module_& m) {
  m.def("_dispatch", [](const std::string& name, py::args args, py::kwargs kwargs) {
    return dispatch_op(name, args, kwargs);
  });
  // The function loom.<name> and the method Tensor.<name>: compiled
  // closures over the op's overload set (no Python frame, no name lookup
  // per call). `tuple_type` wraps multi-output results (a namedtuple).
  m.def("_make_op", [](const std::string& name, py::object tuple_type, bool method) -> py::object {
    OverloadSet* set = &overload_set(name);
    set->tuple_type = std::move(tuple_type);
    auto fn = [set](py::args args, py::kwargs kwargs) { return dispatch_set(*set, args, kwargs); };
    if (method)
      return py::cpp_function(fn, py::name(name.c_str()), py::is_method(py::module_::import("loom._C").attr("Tensor")));
    return py::cpp_function(fn, py::name(name.c_str()));
  });
  m.def("_ops", &op_table, "(name, overload, schema, is_method, is_inplace, return names) for every op");
}

}  // namespace loom::python
