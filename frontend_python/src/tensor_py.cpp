// tensor_py.cpp — loom.Tensor: metadata, conversions, views, and the Python
// operators. The operators are bound here, directly to the C++ functions,
// because they are the hot path (a 1-element `a + b` is mostly binding
// overhead); every other op reaches Tensor through the schema-driven
// methods that loom/__init__.py generates.
#include "convert.h"
#include "ops_py.h"

#include <loom/ops/shape.h>
#include <pybind11/stl.h>

namespace loom::python {
namespace {

// The other operand of a binary operator: a Tensor, or a number made a
// wrapped number on self's device. nullptr-like (undefined) when neither:
// the operator then returns NotImplemented, as Python expects.
Tensor operand(const Tensor& self, py::handle other) {
  if (is_tensor(other)) return as_tensor(other);
  if (is_number(other)) return scalar_tensor(to_scalar(other, "operand"), self.device());
  return Tensor();
}

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);

template <BinaryFn F>
py::object forward_op(const Tensor& self, py::handle other) {
  Tensor o = operand(self, other);
  if (!o.defined()) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(F(self, o));
}
template <BinaryFn F>
py::object reflected_op(const Tensor& self, py::handle other) {
  Tensor o = operand(self, other);
  if (!o.defined()) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(F(o, self));
}

Tensor add2(const Tensor& a, const Tensor& b) { return loom::add(a, b); }
Tensor sub2(const Tensor& a, const Tensor& b) { return loom::sub(a, b); }
Tensor mul2(const Tensor& a, const Tensor& b) { return loom::mul(a, b); }
Tensor div2(const Tensor& a, const Tensor& b) { return loom::div(a, b); }
Tensor floordiv2(const Tensor& a, const Tensor& b) { return loom::floor_divide(a, b); }
Tensor mod2(const Tensor& a, const Tensor& b) { return loom::remainder(a, b); }
Tensor pow2(const Tensor& a, const Tensor& b) { return loom::pow(a, b); }
Tensor matmul2(const Tensor& a, const Tensor& b) { return loom::matmul(a, b); }
Tensor and2(const Tensor& a, const Tensor& b) { return loom::bitwise_and(a, b); }
Tensor or2(const Tensor& a, const Tensor& b) { return loom::bitwise_or(a, b); }
Tensor xor2(const Tensor& a, const Tensor& b) { return loom::bitwise_xor(a, b); }
Tensor eq2(const Tensor& a, const Tensor& b) { return loom::eq(a, b); }
Tensor ne2(const Tensor& a, const Tensor& b) { return loom::ne(a, b); }
Tensor lt2(const Tensor& a, const Tensor& b) { return loom::lt(a, b); }
Tensor le2(const Tensor& a, const Tensor& b) { return loom::le(a, b); }
Tensor gt2(const Tensor& a, const Tensor& b) { return loom::gt(a, b); }
Tensor ge2(const Tensor& a, const Tensor& b) { return loom::ge(a, b); }

// In-place operators run the catalog's in-place op by name and hand back
// the same Python object (`a += b` keeps `a`).
py::object inplace(const char* op, py::handle self, py::handle other) {
  const Tensor& s = as_tensor(self);
  if (!is_tensor(other) && !is_number(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return dispatch_op(op, py::make_tuple(self, other), py::dict());
}

std::vector<int64_t> shape_args(const py::args& args, const char* what) {
  // view(2, 3) and view((2, 3)) alike.
  if (args.size() == 1 && PySequence_Check(args[0].ptr()) && !is_tensor(args[0]))
    return args[0].cast<std::vector<int64_t>>();
  std::vector<int64_t> out;
  for (py::handle a : args) {
    if (!PyIndex_Check(a.ptr()) || PyFloat_Check(a.ptr()))
      throw py::type_error(std::string(what) + "(): sizes must be ints, not " + type_name(a));
    out.push_back(a.cast<int64_t>());
  }
  return out;
}

// Tensor.to(...) with PyTorch's overloads: to(dtype), to(device),
// to(device, dtype), to(other), and dtype=/device= keywords.
Tensor to_any(const Tensor& self, const py::args& args, const py::kwargs& kwargs) {
  std::optional<DType> dtype;
  std::optional<Device> device;
  bool copy = false;
  for (py::handle a : args) {
    if (is_tensor(a)) {
      dtype = as_tensor(a).dtype();
      device = as_tensor(a).device();
    } else if (py::isinstance<PyDType>(a)) {
      dtype = a.cast<PyDType>().value;
    } else if (py::isinstance<py::str>(a) || py::isinstance<Device>(a)) {
      device = to_device(a);
    } else {
      throw py::type_error("to() received an invalid argument of type " + type_name(a) +
                           "; expected a dtype, a device, or a Tensor");
    }
  }
  for (const auto& [k, v] : kwargs) {
    const std::string key = py::str(k);
    if (key == "dtype") dtype = to_optional_dtype(v);
    else if (key == "device") device = v.is_none() ? std::nullopt : std::optional<Device>(to_device(v));
    else if (key == "copy") copy = v.cast<bool>();
    else if (key != "non_blocking") throw py::type_error("to() got an unexpected keyword argument '" + key + "'");
  }
  Tensor out = self;
  if (dtype) out = out.to(*dtype);
  if (device) out = out.to(*device);
  if (copy && out.is_same(self)) out = self.clone();
  return out;
}

}  // namespace

void bind_tensor(py::module_& m) {
  py::class_<PyDType>(m, "dtype")
      .def("__repr__", [](const PyDType& d) { return "loom." + std::string(name(d.value)); })
      .def_property_readonly("is_floating_point", [](const PyDType& d) { return is_floating_point(d.value); })
      .def_property_readonly("itemsize", [](const PyDType& d) { return itemsize(d.value); })
      .def("__eq__", [](const PyDType& a, py::handle b) { return py::isinstance<PyDType>(b) && b.cast<PyDType>().value == a.value; })
      .def("__hash__", [](const PyDType& d) { return static_cast<int64_t>(d.value); })
      .def("__reduce__", [](const PyDType& d) { return py::make_tuple(py::module_::import("loom").attr("_dtype_from_name"), py::make_tuple(std::string(name(d.value)))); });
  m.def("_dtype_from_name", [](const std::string& n) { return dtype_object(dtype_from_name(n)); });
#define LOOM_PY_DTYPE(Name, py_name, code, dl, bits) m.attr(#py_name) = dtype_object(DType::Name);
  LOOM_DTYPE_LIST(LOOM_PY_DTYPE)
#undef LOOM_PY_DTYPE

  py::class_<Device>(m, "device")
      .def(py::init([](py::handle spec) { return to_device(spec); }))
      .def(py::init([](const std::string& type, int index) { return Device(type + ":" + std::to_string(index)); }))
      .def_property_readonly("type", [](const Device& d) { return std::string(d.type_name()); })
      .def_property_readonly("index", [](const Device& d) { return d.index; })
      .def("__str__", [](const Device& d) { return d.str(); })
      .def("__repr__", [](const Device& d) {
        return "device(type='" + std::string(d.type_name()) + "'" + (d.index ? ", index=" + std::to_string(d.index) : std::string()) + ")";
      })
      .def("__eq__", [](const Device& a, py::handle b) {
        return (py::isinstance<Device>(b) || py::isinstance<py::str>(b)) && to_device(b) == a;
      })
      .def("__hash__", [](const Device& d) { return d.type * 1024 + d.index; });

  py::class_<Tensor> t(m, "Tensor", py::dynamic_attr());
  t.def(py::init([](const Tensor& other) { return other; }), "A new handle to the same data (for subclasses such as nn.Parameter)")
      .def(py::init([]() { return empty({0}); }))
      // --- metadata
      .def_property_readonly("shape", [](const Tensor& a) { return py::tuple(py::cast(a.shape())); })
      .def_property_readonly("dtype", [](const Tensor& a) { return dtype_object(a.dtype()); })
      .def_property_readonly("device", [](const Tensor& a) { return a.device(); })
      .def_property_readonly("ndim", &Tensor::dim)
      .def_property_readonly("is_cuda", [](const Tensor& a) { return a.device().type_name() == "cuda"; })
      .def("is_floating_point", &Tensor::is_floating_point)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("element_size", &Tensor::element_size)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("storage_offset", &Tensor::storage_offset)
      .def("data_ptr", [](const Tensor& a) { return reinterpret_cast<uintptr_t>(a.data_ptr()); })
      .def("size", [](const Tensor& a, py::object dim) -> py::object {
        if (dim.is_none()) return py::tuple(py::cast(a.shape()));
        return py::int_(a.size(dim.cast<int64_t>()));
      }, py::arg("dim") = py::none())
      .def("stride", [](const Tensor& a, py::object dim) -> py::object {
        if (dim.is_none()) return py::tuple(py::cast(std::vector<int64_t>(a.strides().begin(), a.strides().end())));
        return py::int_(a.stride(dim.cast<int64_t>()));
      }, py::arg("dim") = py::none())
      .def("__len__", [](const Tensor& a) {
        if (a.dim() == 0) throw py::type_error("len() of a 0-d tensor");
        return a.size(0);
      })
      // --- conversions
      .def("item", [](const Tensor& a) { return scalar_to_python(a.item()); })
      .def("tolist", &to_list)
      .def("__float__", [](const Tensor& a) { return a.item<double>(); })
      .def("__int__", [](const Tensor& a) { return a.item<int64_t>(); })
      .def("__index__", [](const Tensor& a) {
        if (a.is_floating_point() || a.numel() != 1)
          throw py::type_error("only integer tensors of a single element can be converted to an index");
        return a.item<int64_t>();
      })
      .def("__bool__", [](const Tensor& a) {
        if (a.numel() != 1)
          throw py::value_error("Boolean value of Tensor with more than one value is ambiguous");
        return a.item<double>() != 0;
      })
      .def("to", &to_any)
      .def("cpu", &Tensor::cpu)
      .def("type_as", [](const Tensor& a, const Tensor& o) { return a.to(o.dtype()); })
      .def("float", [](const Tensor& a) { return a.to(DType::Float32); })
      .def("double", [](const Tensor& a) { return a.to(DType::Float64); })
      .def("half", [](const Tensor& a) { return a.to(DType::Float16); })
      .def("bfloat16", [](const Tensor& a) { return a.to(DType::BFloat16); })
      .def("long", [](const Tensor& a) { return a.to(DType::Int64); })
      .def("int", [](const Tensor& a) { return a.to(DType::Int32); })
      .def("short", [](const Tensor& a) { return a.to(DType::Int16); })
      .def("char", [](const Tensor& a) { return a.to(DType::Int8); })
      .def("byte", [](const Tensor& a) { return a.to(DType::UInt8); })
      .def("bool", [](const Tensor& a) { return a.to(DType::Bool); })
      .def("clone", &Tensor::clone)
      .def("contiguous", &Tensor::contiguous)
      .def("__repr__", &Tensor::str)
      // --- views
      .def("view", [](const Tensor& a, const py::args& s) {
        if (s.size() == 1 && py::isinstance<PyDType>(s[0]))
          throw py::type_error("view(dtype) is not supported; use to(dtype)");
        return a.view(shape_args(s, "view"));
      })
      .def("reshape", [](const Tensor& a, const py::args& s) { return a.reshape(shape_args(s, "reshape")); })
      .def("view_as", [](const Tensor& a, const Tensor& o) { return a.view(o.sizes()); })
      .def("reshape_as", [](const Tensor& a, const Tensor& o) { return a.reshape(o.sizes()); })
      .def("expand", [](const Tensor& a, const py::args& s) { return a.expand(shape_args(s, "expand")); })
      .def("expand_as", [](const Tensor& a, const Tensor& o) { return a.expand(o.sizes()); })
      .def("permute", [](const Tensor& a, const py::args& s) { return loom::permute(a, shape_args(s, "permute")); })
      .def("transpose", &Tensor::transpose)
      .def("t", &Tensor::t)
      .def_property_readonly("T", [](const Tensor& a) {
        std::vector<int64_t> dims(static_cast<size_t>(a.dim()));
        for (int64_t i = 0; i < a.dim(); ++i) dims[static_cast<size_t>(i)] = a.dim() - 1 - i;
        return loom::permute(a, dims);
      })
      .def_property_readonly("mT", [](const Tensor& a) { return a.transpose(-2, -1); })
      .def("unsqueeze", &Tensor::unsqueeze)
      .def("squeeze", [](const Tensor& a, py::object dim) {
        if (!dim.is_none()) return a.squeeze(dim.cast<int64_t>());
        std::vector<int64_t> keep;
        for (int64_t s : a.sizes()) if (s != 1) keep.push_back(s);
        return a.reshape(keep);
      }, py::arg("dim") = py::none())
      .def("select", &Tensor::select)
      .def("narrow", &Tensor::narrow)
      .def("flatten", [](const Tensor& a, int64_t s, int64_t e) { return loom::flatten(a, s, e); },
           py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("unflatten", [](const Tensor& a, int64_t d, std::vector<int64_t> s) { return loom::unflatten(a, d, s); })
      .def("movedim", [](const Tensor& a, int64_t s, int64_t d) { return loom::movedim(a, s, d); })
      .def("split", [](const Tensor& a, py::object size, int64_t dim) {
        if (PyIndex_Check(size.ptr())) return loom::split(a, size.cast<int64_t>(), dim);
        return loom::split(a, size.cast<std::vector<int64_t>>(), dim);
      }, py::arg("split_size_or_sections"), py::arg("dim") = 0)
      .def("chunk", [](const Tensor& a, int64_t n, int64_t dim) { return loom::chunk(a, n, dim); },
           py::arg("chunks"), py::arg("dim") = 0)
      .def("unbind", [](const Tensor& a, int64_t dim) { return loom::unbind(a, dim); }, py::arg("dim") = 0)
      .def("repeat", [](const Tensor& a, const py::args& s) { return loom::repeat(a, shape_args(s, "repeat")); })
      .def("tile", [](const Tensor& a, const py::args& s) { return loom::tile(a, shape_args(s, "tile")); })
      .def("argsort", [](const Tensor& a, int64_t dim, bool desc) { return loom::argsort(a, dim, desc); },
           py::arg("dim") = -1, py::arg("descending") = false)
      // --- operators
      .def("__add__", &forward_op<add2>, py::is_operator())
      .def("__radd__", &reflected_op<add2>, py::is_operator())
      .def("__sub__", &forward_op<sub2>, py::is_operator())
      .def("__rsub__", &reflected_op<sub2>, py::is_operator())
      .def("__mul__", &forward_op<mul2>, py::is_operator())
      .def("__rmul__", &reflected_op<mul2>, py::is_operator())
      .def("__truediv__", &forward_op<div2>, py::is_operator())
      .def("__rtruediv__", &reflected_op<div2>, py::is_operator())
      .def("__floordiv__", &forward_op<floordiv2>, py::is_operator())
      .def("__rfloordiv__", &reflected_op<floordiv2>, py::is_operator())
      .def("__mod__", &forward_op<mod2>, py::is_operator())
      .def("__rmod__", &reflected_op<mod2>, py::is_operator())
      .def("__pow__", &forward_op<pow2>, py::is_operator())
      .def("__rpow__", &reflected_op<pow2>, py::is_operator())
      .def("__matmul__", &forward_op<matmul2>, py::is_operator())
      .def("__rmatmul__", &reflected_op<matmul2>, py::is_operator())
      .def("__and__", &forward_op<and2>, py::is_operator())
      .def("__rand__", &reflected_op<and2>, py::is_operator())
      .def("__or__", &forward_op<or2>, py::is_operator())
      .def("__ror__", &reflected_op<or2>, py::is_operator())
      .def("__xor__", &forward_op<xor2>, py::is_operator())
      .def("__rxor__", &reflected_op<xor2>, py::is_operator())
      .def("__eq__", &forward_op<eq2>, py::is_operator())
      .def("__ne__", &forward_op<ne2>, py::is_operator())
      .def("__lt__", &forward_op<lt2>, py::is_operator())
      .def("__le__", &forward_op<le2>, py::is_operator())
      .def("__gt__", &forward_op<gt2>, py::is_operator())
      .def("__ge__", &forward_op<ge2>, py::is_operator())
      .def("__iadd__", [](py::handle s, py::handle o) { return inplace("add_", s, o); }, py::is_operator())
      .def("__isub__", [](py::handle s, py::handle o) { return inplace("sub_", s, o); }, py::is_operator())
      .def("__imul__", [](py::handle s, py::handle o) { return inplace("mul_", s, o); }, py::is_operator())
      .def("__itruediv__", [](py::handle s, py::handle o) { return inplace("div_", s, o); }, py::is_operator())
      .def("__imod__", [](py::handle s, py::handle o) { return inplace("remainder_", s, o); }, py::is_operator())
      .def("__ipow__", [](py::handle s, py::handle o) { return inplace("pow_", s, o); }, py::is_operator())
      .def("__iand__", [](py::handle s, py::handle o) { return inplace("bitwise_and_", s, o); }, py::is_operator())
      .def("__ior__", [](py::handle s, py::handle o) { return inplace("bitwise_or_", s, o); }, py::is_operator())
      .def("__ixor__", [](py::handle s, py::handle o) { return inplace("bitwise_xor_", s, o); }, py::is_operator())
      .def("__neg__", [](const Tensor& a) { return loom::neg(a); })
      .def("__pos__", [](const Tensor& a) { return a; })
      .def("__abs__", [](const Tensor& a) { return loom::abs(a); })
      .def("__invert__", [](const Tensor& a) {
        if (a.dtype() == DType::Bool) return loom::logical_not(a);
        if (a.is_floating_point()) throw py::type_error("~ (bitwise not) is only supported for integer and bool tensors");
        return loom::sub(loom::neg(a), scalar_tensor(Scalar(int64_t{1}), a.device()));
      })
      .attr("__hash__") = py::module_::import("builtins").attr("object").attr("__hash__");
}

}  // namespace loom::python
