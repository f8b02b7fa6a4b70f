// tensor_py.cpp — loom.Tensor's methods and properties: metadata,
// conversions, views. The operators are number-protocol slots of the type
// itself (tensor_type.cpp); every other op reaches Tensor through the
// schema-driven methods that loom/_ops.py generates.
#include "convert.h"
#include "ops_py.h"

#include <loom/ops/shape.h>
#include <pybind11/stl.h>

namespace loom::python {
namespace {

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
  bool copy = false, non_blocking = false;
  for (py::handle a : args) {
    if (py::isinstance<py::bool_>(a)) {  // to(device, dtype, non_blocking)
      non_blocking = a.cast<bool>();
    } else if (is_tensor(a)) {
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
    else if (key == "non_blocking") non_blocking = v.cast<bool>();
    else throw py::type_error("to() got an unexpected keyword argument '" + key + "'");
  }
  Tensor out = self;
  if (dtype) out = out.to(*dtype);
  if (device) {
    py::gil_scoped_release release;  // a blocking copy waits for the device
    out = out.to(*device, non_blocking);
  }
  if (copy && out.is_same(self)) out = self.clone();
  return out;
}

}  // namespace

void bind_tensor(py::module_& m) {
  m.def("stack", [](const std::vector<Tensor>& tensors, int64_t dim) { return loom::stack(tensors, dim); },
        py::arg("tensors"), py::arg("dim") = 0);
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

  create_tensor_type(m);
  TensorClass t(m.attr("Tensor"));
  t  // --- metadata
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
      // (address, bytes) of the whole storage under this view: what tells views of one storage
      // apart (loom.save writes a shared storage once, as torch.save does).
      .def("_storage_span", [](const Tensor& a) {
        return py::make_tuple(reinterpret_cast<uintptr_t>(a.storage()->data()), a.storage()->nbytes());
      })
      .def("as_strided", [](const Tensor& a, std::vector<int64_t> size, std::vector<int64_t> stride,
                            std::optional<int64_t> storage_offset) { return a.as_strided(size, stride, storage_offset); },
           py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none())
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
      .def("pin_memory", [](const Tensor& t, py::object device) {
        return t.pin_memory(device.is_none() ? std::string("cuda") : to_device(device).type_name());
      }, py::arg("device") = py::none(),
      "A copy in page-locked host memory of `device`'s type (default cuda), for non_blocking copies")
      .def("is_pinned", [](const Tensor& t, py::object) { return t.is_pinned(); }, py::arg("device") = py::none())
      .def("cuda", [](const Tensor& t, py::object device, bool non_blocking) {
        const Device d = device.is_none() ? Device("cuda")
                         : py::isinstance<py::int_>(device) ? Device("cuda:" + std::to_string(device.cast<int>()))
                                                            : to_device(device);
        py::gil_scoped_release release;
        return t.to(d, non_blocking);
      }, py::arg("device") = py::none(), py::arg("non_blocking") = false)
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
      ;
}

}  // namespace loom::python
