// jit_py.cpp — loom._C's side of loom.jit: tracing a Python callable into a
// graph (loom/jit/jit.h), the Graph object, and parsing its text form.
#include "convert.h"
#include "ops_py.h"

#include <loom/jit/jit.h>
#include <loom/jit/module.h>
#include <loom/jit/passes.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

namespace loom::python {
namespace {

// A program's result as tensors: one Tensor, or a tuple/list of them.
std::vector<Tensor> tensors_of(const py::object& result) {
  if (is_tensor(result)) return {as_tensor(result)};
  if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
    std::vector<Tensor> out;
    for (py::handle h : result) {
      if (!is_tensor(h))
        throw py::type_error("loom.jit.trace: the traced function must return a Tensor or a tuple/list of "
                             "Tensors; an element is " + std::string(py::str(py::type::of(h).attr("__name__"))));
      out.push_back(as_tensor(h));
    }
    return out;
  }
  throw py::type_error("loom.jit.trace: the traced function must return a Tensor or a tuple/list of Tensors, not " +
                       std::string(py::str(py::type::of(result).attr("__name__"))));
}

}  // namespace

namespace {

py::dict value_info(const jit::Value& v) {
  py::dict d;
  d["name"] = v.name;
  d["kind"] = v.producer ? "node"
              : v.kind == jit::InputKind::Parameter ? "param"
              : v.kind == jit::InputKind::Constant  ? "const"
                                                    : "input";
  d["dtype"] = dtype_object(v.dtype);
  d["sizes"] = v.sizes;
  d["wrapped_number"] = v.wrapped_number;
  return d;
}

py::object attr_object(const jit::Attr& a) {
  using K = jit::Attr::Kind;
  switch (a.kind) {
    case K::None: return py::none();
    case K::Bool: return py::bool_(a.i != 0);
    case K::Int: return py::int_(a.i);
    case K::Float: return py::float_(a.f);
    case K::IntList: return py::cast(a.ints);
    case K::FloatList: return py::cast(a.floats);
    case K::String: return py::str(a.s);
    case K::DType: return dtype_object(static_cast<DType>(a.i));
    case K::Device: return py::str(a.device.str());
    case K::TensorList: return py::int_(a.i);
  }
  return py::none();
}

py::dict node_info(const jit::Node& n) {
  py::dict d;
  d["op"] = n.op->name();
  py::list inputs, outputs;
  for (const jit::Value* v : n.inputs) inputs.append(v ? py::object(py::str(v->name)) : py::none());
  for (const jit::Value* v : n.outputs) outputs.append(v->name);
  py::dict args;
  size_t k = 0;
  for (const Argument& a : n.op->schema().args) {
    if (a.type == ArgType::Tensor) continue;
    if (k < n.attrs.size()) args[py::str(a.name)] = attr_object(n.attrs[k++]);
  }
  d["inputs"] = inputs;
  d["args"] = args;
  d["outputs"] = outputs;
  return d;
}

}  // namespace

void bind_jit(py::module_& m) {
  using jit::Graph;
  py::class_<Graph, std::shared_ptr<Graph>>(m, "Graph",
                                           "A traced program: catalog ops over SSA values (loom/jit/graph.h)")
      .def("__str__", &Graph::str)
      .def("validate", &Graph::validate)
      .def("optimize", &jit::optimize,
           "simplify, fold_constants, eliminate_common_subexpressions, eliminate_dead_code, repeated while "
           "they change something, then fuse_elementwise; returns how many nodes changed")
      .def("simplify", &jit::simplify)
      .def("fold_constants", &jit::fold_constants)
      .def("eliminate_common_subexpressions", &jit::eliminate_common_subexpressions)
      .def("eliminate_dead_code", &jit::eliminate_dead_code)
      .def("freeze_parameters", &jit::freeze_parameters,
           "Parameters become (detached) constants, but those an in-place node writes; refuses a batch_norm "
           "in training mode; returns how many")
      .def("fold_batch_norm", &jit::fold_batch_norm,
           "Folds an eval-mode batch_norm into the conv1d/conv2d/linear before it (all constants); returns "
           "how many batch_norms went")
      .def("freeze", &jit::freeze, "freeze_parameters, fold_batch_norm, then optimize")
      .def("fuse_elementwise", &jit::fuse_elementwise,
           "Joins chains of elementwise ops into _fused nodes, offered to the device as one region")
      .def("run", [](const Graph& g, const std::vector<Tensor>& inputs) { return jit::run(g, inputs); },
           py::arg("inputs"), "Runs the graph on its inputs; returns the list of its outputs")
      .def_property_readonly("input_names", [](const Graph& g) {
        std::vector<std::string> out;
        for (const jit::Value* v : g.inputs())
          if (v->kind == jit::InputKind::Input) out.push_back(v->name);
        return out;
      })
      .def_property_readonly("parameter_names", [](const Graph& g) {
        std::vector<std::string> out;
        for (const jit::Value* v : g.inputs())
          if (v->kind == jit::InputKind::Parameter) out.push_back(v->name);
        return out;
      })
      .def_property_readonly("num_outputs", [](const Graph& g) { return g.outputs().size(); })
      .def_property_readonly("ops", [](const Graph& g) {
        std::vector<std::string> out;
        for (const auto& n : g.nodes()) out.push_back(n->op->name());
        return out;
      }, "The op of every node, in order")
      .def("tensors", [](const Graph& g) {
        py::dict out;
        for (const auto& [name, t] : g.tensors()) out[py::str(name)] = t;
        return out;
      }, "The parameters and constants the graph holds, by name")
      .def("values_info", [](const Graph& g) {
        py::list out;
        for (const jit::Value* v : g.inputs()) out.append(value_info(*v));
        for (const auto& n : g.nodes())
          for (const jit::Value* v : n->outputs) out.append(value_info(*v));
        return out;
      }, "Every value: dict(name, kind ('input', 'param', 'const' or 'node'), dtype, sizes (-1: dynamic), "
         "wrapped_number)")
      .def("nodes_info", [](const Graph& g) {
        py::list out;
        for (const auto& n : g.nodes()) out.append(node_info(*n));
        return out;
      }, "Every node in order: dict(op, inputs (value names, None where absent), args (the other "
         "arguments by schema name), outputs (value names))")
      .def_property_readonly("output_names", [](const Graph& g) {
        std::vector<std::string> out;
        for (const jit::Value* v : g.outputs()) out.push_back(v->name);
        return out;
      })
      .def("set_tensor", [](Graph& g, const std::string& name, const Tensor& t) {
        const jit::Value* v = g.find(name);
        if (!v || v->producer || v->kind == jit::InputKind::Input)
          throw py::key_error("loom.jit: the graph has no parameter or constant %" + name);
        g.tensors()[name] = t;
      }, py::arg("name"), py::arg("tensor"));

  m.def("_jit_trace", [](py::function fn, const std::vector<Tensor>& inputs,
                         const std::vector<std::pair<std::string, Tensor>>& parameters,
                         const std::vector<std::string>& input_names, bool dynamic_batch) {
    jit::TraceOptions options;
    options.input_names = input_names;
    options.dynamic_batch = dynamic_batch;
    auto program = [&](const std::vector<Tensor>& in) {
      py::tuple args(in.size());
      for (size_t i = 0; i < in.size(); ++i) args[i] = py::cast(in[i]);
      return tensors_of(fn(*args));
    };
    return std::make_shared<Graph>(jit::trace(program, inputs, parameters, options));
  }, py::arg("fn"), py::arg("inputs"), py::arg("parameters"), py::arg("input_names"),
     py::arg("dynamic_batch") = false);

  m.def("_jit_save", [](const Graph& g, const std::string& path) { jit::save(g, path); }, py::arg("graph"),
        py::arg("path"));
  m.def("_jit_load", [](const std::string& path, std::optional<Device> map_location) {
    jit::Module m = jit::load(path, map_location);
    return std::make_shared<Graph>(std::move(m.graph()));
  }, py::arg("path"), py::arg("map_location") = py::none());

  m.def("_jit_graph_to", [](const std::shared_ptr<Graph>& g, const Device& device) {
    jit::Module(g).to(device);  // in place: the Module shares the graph
  }, py::arg("graph"), py::arg("device"));

  m.def("_jit_parse_graph", [](const std::string& text) {
    return std::make_shared<Graph>(jit::parse_graph(text));
  }, py::arg("text"));
}

}  // namespace loom::python
