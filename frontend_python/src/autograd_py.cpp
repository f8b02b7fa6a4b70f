// autograd_py.cpp — the autograd side of loom.Tensor (requires_grad, grad,
// grad_fn, backward, hooks) and loom._C's autograd functions, which
// loom/autograd.py wraps into PyTorch's API.
#include "convert.h"
#include "ops_py.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

namespace loom::python {
namespace {

// A graph node as Python sees it (tensor.grad_fn).
struct PyNode {
  autograd::NodePtr node;
};

py::object node_object(const autograd::NodePtr& n) {
  if (!n) return py::none();
  return py::cast(PyNode{n});
}

std::vector<Tensor> tensors_of(py::handle seq, const char* what) {
  std::vector<Tensor> out;
  if (is_tensor(seq)) return {as_tensor(seq)};
  for (py::handle x : py::reinterpret_borrow<py::sequence>(seq)) {
    if (x.is_none()) {
      out.emplace_back();
      continue;
    }
    if (!is_tensor(x)) throw py::type_error(std::string(what) + " must hold Tensors, not " + type_name(x));
    out.push_back(as_tensor(x));
  }
  return out;
}

// A Python callable as a C++ gradient function (called with the GIL held:
// backward runs on the calling thread).
autograd::CustomBackward wrap_backward(py::function fn) {
  return [fn](const std::vector<Tensor>& grads) {
    py::tuple args(grads.size());
    for (size_t i = 0; i < grads.size(); ++i) args[i] = grads[i].defined() ? py::cast(grads[i]) : py::none();
    py::object r = fn(*args);
    if (is_tensor(r) || r.is_none()) r = py::make_tuple(r);
    return tensors_of(r, "backward's result");
  };
}

}  // namespace

void bind_autograd(py::module_& m) {
  py::class_<PyNode>(m, "Node")
      .def("name", [](const PyNode& n) { return n.node->name(); })
      .def_property_readonly("next_functions", [](const PyNode& n) {
        py::list out;
        for (const auto& e : n.node->next_edges()) out.append(py::make_tuple(node_object(e.fn), e.input_nr));
        return py::tuple(out);
      })
      .def("register_prehook", [](const PyNode& n, py::function fn) {
        return n.node->add_pre_hook(0, [fn](const Tensor& g) {
          py::object r = fn(g);
          return r.is_none() ? Tensor() : as_tensor(r);
        });
      })
      .def("__repr__", [](const PyNode& n) { return "<" + n.node->name() + " object>"; })
      .def("__eq__", [](const PyNode& a, const PyNode& b) { return a.node.get() == b.node.get(); })
      .def("__hash__", [](const PyNode& n) { return reinterpret_cast<uintptr_t>(n.node.get()); });

  TensorClass tensor(m.attr("Tensor"));
  tensor
      .def_property("requires_grad", &Tensor::requires_grad,
                    [](Tensor& t, bool v) { t.requires_grad_(v); })
      .def("requires_grad_", [](py::handle self, bool v) {
        const_cast<Tensor&>(as_tensor(self)).requires_grad_(v);
        return py::reinterpret_borrow<py::object>(self);
      }, py::arg("requires_grad") = true)
      .def_property("grad",
                    [](const Tensor& t) -> py::object {
                      const Tensor& g = t.grad();
                      return g.defined() ? py::cast(g) : py::none();
                    },
                    [](Tensor& t, py::handle g) {
                      if (!g.is_none() && !is_tensor(g)) throw py::type_error("grad must be a Tensor or None");
                      if (!g.is_none()) {
                        const Tensor& gt = as_tensor(g);
                        if (!(gt.sizes() == t.sizes()))
                          throw py::value_error("assigned grad has shape " + shape_str(gt.sizes()) +
                                                " but the tensor has shape " + shape_str(t.sizes()));
                      }
                      t.mutable_grad() = g.is_none() ? Tensor() : as_tensor(g);
                    })
      .def_property_readonly("grad_fn", [](const Tensor& t) { return node_object(t.grad_fn()); })
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property_readonly("_version", &Tensor::_version)
      .def_property_readonly("output_nr", &Tensor::output_nr)
      .def_property("data", [](const Tensor& t) { return t.detach(); },
                    [](py::handle self, const Tensor& value) {
                      // Rebinds this Python object to `value`'s memory, keeping
                      // its requires_grad (how `param.data = ...` swaps weights).
                      Tensor& t = tensor_of(self.ptr());
                      const bool rg = t.requires_grad() && t.is_leaf();
                      t = value.detach();
                      if (rg) t.requires_grad_(true);
                    })
      .def("detach", &Tensor::detach)
      .def("detach_", [](py::handle self) {
        const_cast<Tensor&>(as_tensor(self)).detach_();
        return py::reinterpret_borrow<py::object>(self);
      })
      .def("retain_grad", &Tensor::retain_grad)
      .def_property_readonly("retains_grad", &Tensor::retains_grad)
      .def("_register_hook", [](Tensor& t, py::function fn) {
        return t.register_hook([fn](const Tensor& g) {
          py::object r = fn(g);
          if (r.is_none()) return Tensor();
          if (!is_tensor(r)) throw py::type_error("a tensor hook must return a Tensor or None");
          return as_tensor(r);
        });
      })
      .def("_remove_hook", [](Tensor& t, int64_t id) { t.remove_hook(id); });

  // torch's Variable._execution_engine.queue_callback: runs after the
  // current backward pass (the GIL is held through backward).
  m.def("_queue_callback", [](py::function fn) { autograd::queue_callback([fn] { fn(); }); });
  m.def("is_grad_enabled", &autograd::GradMode::is_enabled);
  m.def("_set_grad_enabled", &autograd::GradMode::set_enabled);
  m.def("_backward", [](py::handle outputs, py::handle grads, py::object retain_graph, bool create_graph) {
    const std::optional<bool> retain = retain_graph.is_none() ? std::nullopt : std::optional<bool>(retain_graph.cast<bool>());
    autograd::backward(tensors_of(outputs, "tensors"), grads.is_none() ? std::vector<Tensor>{} : tensors_of(grads, "grad_tensors"),
                       retain, create_graph);
  });
  m.def("_grad", [](py::handle outputs, py::handle inputs, py::handle grads, py::object retain_graph,
                    bool create_graph, bool allow_unused) {
    const std::optional<bool> retain = retain_graph.is_none() ? std::nullopt : std::optional<bool>(retain_graph.cast<bool>());
    auto result = autograd::grad(tensors_of(outputs, "outputs"), tensors_of(inputs, "inputs"),
                                 grads.is_none() ? std::vector<Tensor>{} : tensors_of(grads, "grad_outputs"),
                                 retain, create_graph, allow_unused);
    py::tuple out(result.size());
    for (size_t i = 0; i < result.size(); ++i) out[i] = result[i].defined() ? py::cast(result[i]) : py::none();
    return out;
  });
  m.def("_record_function", [](const std::string& name, py::handle inputs, py::handle outputs, py::function backward) {
    autograd::record_custom_function(name, tensors_of(inputs, "inputs"), tensors_of(outputs, "outputs"),
                                     wrap_backward(std::move(backward)));
  });
  auto checker = [](bool second) {
    return [second](py::function fn, py::handle inputs, double eps, double atol, double rtol) {
      autograd::GradcheckFn f = [fn](const std::vector<Tensor>& xs) {
        py::tuple args(xs.size());
        for (size_t i = 0; i < xs.size(); ++i) args[i] = py::cast(xs[i]);
        py::object r = fn(*args);
        if (is_tensor(r)) return std::vector<Tensor>{as_tensor(r)};
        return tensors_of(r, "the function's outputs");
      };
      autograd::GradcheckOptions o{eps, atol, rtol};
      return second ? autograd::gradgradcheck(f, tensors_of(inputs, "inputs"), o)
                    : autograd::gradcheck(f, tensors_of(inputs, "inputs"), o);
    };
  };
  m.def("_gradcheck", checker(false));
  m.def("_gradgradcheck", checker(true));
}

}  // namespace loom::python
