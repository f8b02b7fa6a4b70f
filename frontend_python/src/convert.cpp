// convert.cpp — see convert.h.
#include "convert.h"

#include "array_interface.h"

#include <array>
#include <cstring>
#include <vector>

namespace loom::python {

namespace {
constexpr size_t kNumDTypes = 10;  // LOOM_DTYPE_LIST

std::array<py::object, kNumDTypes>& dtype_objects() {
  static auto* objects = new std::array<py::object, kNumDTypes>();  // outlives interpreter teardown
  return *objects;
}
}  // namespace

py::object dtype_object(DType t) {
  auto& objs = dtype_objects();
  py::object& o = objs[static_cast<size_t>(t)];
  if (!o) o = py::cast(PyDType{t});
  return o;
}

DType to_dtype(py::handle h, const char* what) {
  if (py::isinstance<PyDType>(h)) return h.cast<PyDType>().value;
  if (py::isinstance<py::str>(h)) return dtype_from_name(h.cast<std::string>());
  // Python's own types, as PyTorch accepts them: float, int, bool.
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::Float64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::Int64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
  throw py::type_error(std::string(what) + " must be a loom.dtype (e.g. loom.float32), not " + type_name(h));
}

std::optional<DType> to_optional_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h);
}

Device to_device(py::handle h) {
  if (py::isinstance<Device>(h)) return h.cast<Device>();
  if (py::isinstance<py::str>(h)) return Device(h.cast<std::string>());
  throw py::type_error("device must be a str such as 'cpu' or 'cuda:0', or a loom.device, not " + type_name(h));
}

std::string type_name(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")); }


bool is_number(py::handle h) {
  if (PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr())) return true;
  // numpy scalars (np.float32(1), np.int64(2), np.bool_): anything with
  // __index__ or __float__ that is not a sequence or a tensor.
  if (is_tensor(h) || PySequence_Check(h.ptr())) return false;
  return PyIndex_Check(h.ptr()) || PyNumber_Check(h.ptr());
}

Scalar to_scalar(py::handle h, const char* what) {
  if (PyBool_Check(h.ptr())) return Scalar(h.ptr() == Py_True);
  if (PyLong_Check(h.ptr())) return Scalar(h.cast<int64_t>());
  if (PyFloat_Check(h.ptr())) return Scalar(h.cast<double>());
  if (is_tensor(h)) {
    const Tensor& t = as_tensor(h);
    if (t.numel() == 1) return t.item();
  }
  if (is_number(h)) {
    const std::string kind = py::str(py::getattr(py::getattr(h, "dtype", py::none()), "kind", py::str("")));
    if (kind == "b") return Scalar(py::bool_(py::reinterpret_borrow<py::object>(h)).cast<bool>());
    if (PyIndex_Check(h.ptr())) return Scalar(py::int_(py::reinterpret_borrow<py::object>(h)).cast<int64_t>());
    return Scalar(py::float_(py::reinterpret_borrow<py::object>(h)).cast<double>());
  }
  throw py::type_error(std::string(what) + " must be a number, not " + type_name(h));
}

py::object scalar_to_python(const Scalar& s) {
  if (s.is_floating_point()) return py::float_(s.to_double());
  if (s.default_dtype() == DType::Bool) return py::bool_(s.to_double() != 0);
  return py::int_(s.to<int64_t>());
}

// ---- loom.tensor(data) ----------------------------------------------------------------

namespace {

struct Nested {
  std::vector<int64_t> shape;
  std::vector<double> floats;     // every leaf as double...
  std::vector<int64_t> ints;      // ...and as int64 (0 for floating leaves)
  // PyTorch's inference: each leaf has a dtype (bool, int64, the default
  // float for Python numbers; its own for numpy scalars and 0-d tensors),
  // and the tensor's is their promotion.
  std::optional<DType> dtype;
};

// A leaf's dtype as torch.tensor infers it.
DType leaf_dtype(py::handle h, const Scalar& s) {
  if (PyBool_Check(h.ptr())) return DType::Bool;
  if (PyLong_CheckExact(h.ptr())) return DType::Int64;
  if (PyFloat_CheckExact(h.ptr())) return kDefaultFloat;
  if (is_tensor(h)) return as_tensor(h).dtype();
  if (const std::optional<ArrayInterface> a = read_array_interface(h)) return a->dtype;  // numpy scalars
  return s.is_floating_point() ? kDefaultFloat : s.default_dtype() == DType::Bool ? DType::Bool : DType::Int64;
}

void walk(py::handle h, size_t depth, Nested& n) {
  if (is_number(h) || (is_tensor(h) && as_tensor(h).dim() == 0)) {
    if (depth != n.shape.size())
      throw py::value_error("loom.tensor: expected a sequence at depth " + std::to_string(depth) +
                            " (ragged nested lists are not a tensor)");
    const Scalar s = to_scalar(h, "a tensor element");
    const DType d = leaf_dtype(h, s);
    n.dtype = n.dtype ? promote_types(*n.dtype, d) : d;
    n.floats.push_back(s.to_double());
    n.ints.push_back(s.is_floating_point() ? 0 : s.to<int64_t>());
    return;
  }
  if (!PySequence_Check(h.ptr()) || py::isinstance<py::str>(h))
    throw py::type_error("loom.tensor: could not infer a dtype from an element of type " + type_name(h));
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  const auto len = static_cast<int64_t>(py::len(seq));
  if (depth == n.shape.size()) {
    if (n.dtype)
      throw py::value_error("loom.tensor: expected a number at depth " + std::to_string(depth) +
                            " (ragged nested lists are not a tensor)");
    n.shape.push_back(len);
  } else if (depth > n.shape.size() || n.shape[depth] != len) {
    throw py::value_error("loom.tensor: expected a sequence of length " +
                          std::to_string(depth < n.shape.size() ? n.shape[depth] : 0) + " at depth " +
                          std::to_string(depth) + " but got length " + std::to_string(len));
  }
  for (const py::handle item : seq) walk(item, depth + 1, n);
}

}  // namespace

namespace {

bool is_row_major(const ArrayInterface& a) {
  int64_t step = static_cast<int64_t>(a.itemsize);
  for (size_t i = a.shape.size(); i-- > 0;) {
    if (a.shape[i] != 1 && a.strides[i] != step) return false;
    step *= a.shape[i];
  }
  return true;
}

// A copy of an array-like's elements (numpy arrays and scalars, anything
// with __array_interface__). numpy itself reorders a strided or
// byte-swapped array first, so loom reads only native row-major memory.
Tensor from_array_copy(py::handle obj, ArrayInterface a) {
  if (!a.native_byte_order || !is_row_major(a)) {
    const py::object native = numpy_module().attr("dtype")(a.typestr).attr("newbyteorder")("=");
    const py::object copy = numpy_module().attr("ascontiguousarray")(obj, py::arg("dtype") = native);
    a = *read_array_interface(copy);
    a.keep = copy;  // the memory read below
  }
  Tensor out = empty(a.shape, a.dtype, cpu_device());
  if (out.nbytes()) std::memcpy(out.data_ptr(), a.data, out.nbytes());
  return out;
}

}  // namespace

Tensor tensor_from_data(py::handle data, std::optional<DType> dtype, std::optional<Device> device) {
  Tensor t;
  if (is_tensor(data)) {
    autograd::NoGradGuard no_grad;
    t = as_tensor(data).clone();
  } else if (std::optional<ArrayInterface> a = read_array_interface(data)) {
    t = from_array_copy(data, std::move(*a));
  } else {
    Nested n;
    walk(data, 0, n);
    const std::vector<int64_t>& shape = n.shape;
    if (!n.dtype) {
      t = empty(shape, dtype.value_or(kDefaultFloat), cpu_device());
    } else if (*n.dtype == DType::Bool) {
      std::vector<uint8_t> b(n.ints.begin(), n.ints.end());
      t = empty(shape, DType::Bool, cpu_device());
      std::memcpy(t.data_ptr(), b.data(), b.size());
    } else if (!is_floating_point(*n.dtype)) {
      t = from_vector(n.ints, shape).to(*n.dtype);
    } else {
      // Rounded once, to the requested dtype (a float64 tensor keeps every
      // digit of a Python float), else to the inferred one.
      t = from_vector(n.floats, shape);
      if (!dtype) t = t.to(*n.dtype);
    }
  }
  if (dtype) t = t.to(*dtype);
  if (device) t = t.to(*device);
  return t;
}

py::object to_list(const Tensor& t) {
  const Tensor host = t.cpu().contiguous();
  if (host.dim() == 0) return scalar_to_python(host.item());
  // Elements as Python numbers of the right kind, nested by shape.
  std::vector<py::object> flat;
  flat.reserve(static_cast<size_t>(host.numel()));
  if (host.is_floating_point()) {
    for (double v : host.to_vector<double>()) flat.emplace_back(py::float_(v));
  } else if (host.dtype() == DType::Bool) {
    for (bool v : host.to_vector<bool>()) flat.emplace_back(py::bool_(v));
  } else {
    for (int64_t v : host.to_vector<int64_t>()) flat.emplace_back(py::int_(v));
  }
  size_t pos = 0;
  const auto sizes = host.sizes();
  std::function<py::object(size_t)> build = [&](size_t d) -> py::object {
    py::list l;
    for (int64_t i = 0; i < sizes[d]; ++i) l.append(d + 1 == sizes.size() ? flat[pos++] : build(d + 1));
    return l;
  };
  return build(0);
}

}  // namespace loom::python
