// array_interface.cpp — see array_interface.h.
#include "array_interface.h"

#include <bit>
#include <cstring>

namespace loom::python {
namespace {

constexpr char kNativeOrder = (std::endian::native == std::endian::little) ? '<' : '>';

[[noreturn]] void bad_interface(py::handle obj, const std::string& what) {
  throw py::type_error("loom: the __array_interface__ of a " + type_name(obj) + " " + what);
}

// numpy's name for obj's dtype ("complex64"), else the interface's typestr.
std::string dtype_name(py::handle obj, const std::string& typestr) {
  if (py::hasattr(obj, "dtype")) return py::str(obj.attr("dtype"));
  return typestr;
}

// The loom dtype of a typestr's kind and size, if loom has one.
std::optional<DType> dtype_of(char kind, size_t size) {
  switch (kind) {
    case 'b': if (size == 1) return DType::Bool; break;
    case 'u': if (size == 1) return DType::UInt8; break;
    case 'i':
      switch (size) {
        case 1: return DType::Int8;
        case 2: return DType::Int16;
        case 4: return DType::Int32;
        case 8: return DType::Int64;
      }
      break;
    case 'f':
      switch (size) {
        case 2: return DType::Float16;
        case 4: return DType::Float32;
        case 8: return DType::Float64;
      }
      break;
  }
  return std::nullopt;
}

// typestr "<f4" as (byte order, kind, item size). A size that is not all
// digits ("|O", "<M8[ns]") reads as 0, which no loom dtype has.
struct TypeStr {
  char order, kind;
  size_t size;
};
TypeStr parse_typestr(py::handle obj, const std::string& s) {
  if (s.size() < 2) bad_interface(obj, "has a malformed typestr '" + s + "'");
  size_t size = 0;
  for (size_t i = 2; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return {s[0], s[1], 0};
    size = size * 10 + static_cast<size_t>(s[i] - '0');
  }
  return {s[0], s[1], size};
}

std::vector<int64_t> int_tuple(py::handle obj, py::handle t, const char* field) {
  if (!PyTuple_Check(t.ptr())) bad_interface(obj, std::string("has a '") + field + "' that is not a tuple");
  std::vector<int64_t> out;
  for (py::handle e : py::reinterpret_borrow<py::tuple>(t)) out.push_back(e.cast<int64_t>());
  return out;
}

// The interface dict, or an empty object when obj has none.
py::object interface_dict(py::handle obj) {
  PyObject* d = PyObject_GetAttrString(obj.ptr(), "__array_interface__");
  if (!d) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
    PyErr_Clear();
    return {};
  }
  return py::reinterpret_steal<py::object>(d);
}

// The holder numpy_view_of gives numpy.asarray: numpy keeps it as the new
// array's base, and it keeps the tensor's Storage.
struct ArrayExport {
  Storage storage;
  py::dict interface;
};

std::string typestr_of(DType t) {
  const auto native = [](const char* kind_size) { return std::string(1, kNativeOrder) + kind_size; };
  switch (t) {
    case DType::Bool: return "|b1";
    case DType::UInt8: return "|u1";
    case DType::Int8: return "|i1";
    case DType::Int16: return native("i2");
    case DType::Int32: return native("i4");
    case DType::Int64: return native("i8");
    case DType::Float16: return native("f2");
    case DType::BFloat16: break;
    case DType::Float32: return native("f4");
    case DType::Float64: return native("f8");
  }
  // numpy names its dtypes as loom does, except that it has no bfloat16.
  throw py::type_error("Got unsupported ScalarType BFloat16 (numpy has no bfloat16)");
}

}  // namespace

bool surely_not_array(py::handle obj) {
  PyObject* o = obj.ptr();
  // Exact checks: numpy's float64 subclasses float, and is an array scalar.
  return PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyBool_Check(o) || PyList_Check(o) || PyTuple_Check(o) ||
         PyUnicode_Check(o) ||
         PyDict_Check(o) || o == Py_None || is_tensor_object(o);
}

std::optional<ArrayInterface> read_array_interface(py::handle obj) {
  if (surely_not_array(obj)) return std::nullopt;
  const py::object d = interface_dict(obj);
  if (!d) return std::nullopt;
  if (!PyDict_Check(d.ptr())) bad_interface(obj, "is not a dict");
  const py::dict dict = py::reinterpret_borrow<py::dict>(d);
  if (!dict.contains("version") || dict["version"].cast<int>() != 3)
    bad_interface(obj, "is not version 3 (the only version numpy writes)");
  if (!dict.contains("typestr") || !dict.contains("shape") || !dict.contains("data"))
    bad_interface(obj, "lacks one of 'typestr', 'shape' and 'data'");
  const std::string typestr = py::str(dict["typestr"]);
  const TypeStr ts = parse_typestr(obj, typestr);
  const std::optional<DType> dtype = dtype_of(ts.kind, ts.size);
  if (!dtype) throw py::type_error("loom: numpy dtype " + dtype_name(obj, typestr) + " has no loom equivalent");

  ArrayInterface a;
  a.dtype = *dtype;
  a.itemsize = ts.size;
  a.native_byte_order = ts.order == '|' || ts.order == '=' || ts.order == kNativeOrder;
  a.typestr = typestr;
  a.keep = d;
  a.shape = int_tuple(obj, dict["shape"], "shape");
  const py::object data = dict["data"];
  if (!PyTuple_Check(data.ptr()) || py::len(data) != 2)
    bad_interface(obj, "has no (pointer, read-only) 'data' tuple (a buffer object there is not supported)");
  a.data = reinterpret_cast<void*>(data[py::int_(0)].cast<uintptr_t>());
  a.readonly = data[py::int_(1)].cast<bool>();
  const py::object strides = dict.contains("strides") ? py::object(dict["strides"]) : py::none();
  if (strides.is_none()) {
    int64_t step = static_cast<int64_t>(a.itemsize);
    a.strides.assign(a.shape.size(), 0);
    for (size_t i = a.shape.size(); i-- > 0;) {
      a.strides[i] = step;
      step *= a.shape[i];
    }
  } else {
    a.strides = int_tuple(obj, strides, "strides");
    if (a.strides.size() != a.shape.size())
      bad_interface(obj, "has " + std::to_string(a.strides.size()) + " strides for " +
                             std::to_string(a.shape.size()) + " dims");
  }
  return a;
}

char array_kind(py::handle obj) {
  if (surely_not_array(obj)) return 0;
  const py::object d = interface_dict(obj);
  if (!d || !PyDict_Check(d.ptr())) return 0;
  const py::dict dict = py::reinterpret_borrow<py::dict>(d);
  if (!dict.contains("typestr")) return 0;
  const std::string typestr = py::str(dict["typestr"]);
  return typestr.size() >= 2 ? typestr[1] : 0;
}

py::handle numpy_module() {
  static auto* numpy = new py::object(py::module_::import("numpy"));  // outlives interpreter teardown
  return *numpy;
}

py::object numpy_view_of(const Tensor& t) {
  const std::string typestr = typestr_of(t.dtype());
  py::tuple shape(t.dim()), strides(t.dim());
  for (int64_t i = 0; i < t.dim(); ++i) {
    shape[static_cast<size_t>(i)] = py::int_(t.sizes()[static_cast<size_t>(i)]);
    strides[static_cast<size_t>(i)] = py::int_(t.strides()[static_cast<size_t>(i)] * t.element_size());
  }
  // An empty tensor may have no memory at all; numpy gets its own then.
  if (t.numel() == 0) return numpy_module().attr("empty")(shape, py::arg("dtype") = typestr);
  py::dict iface;
  iface["version"] = 3;
  iface["typestr"] = typestr;
  iface["shape"] = shape;
  iface["strides"] = strides;
  iface["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(t.data_ptr()), false);
  const py::object holder = py::cast(ArrayExport{t.storage(), iface});
  return numpy_module().attr("asarray")(holder);
}

void bind_array_interface(py::module_& m) {
  py::class_<ArrayExport>(m, "_ArrayExport", "A tensor's memory as numpy sees it (the base of Tensor.numpy()).")
      .def_property_readonly("__array_interface__", [](const ArrayExport& e) { return e.interface; });
}

}  // namespace loom::python
