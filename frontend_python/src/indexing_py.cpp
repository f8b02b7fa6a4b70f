// indexing_py.cpp — Tensor.__getitem__ / __setitem__ / __iter__ /
// __contains__ with PyTorch's semantics.
//
// Each Python item becomes a loom::indexing::TensorIndex (lists and arrays
// become tensors) and the core applies PyTorch's rules (loom/indexing.h,
// shared with the C++ API's Tensor::index): ints, slices, None, `...` and
// bools as views, tensors through advanced indexing over that view. So
// `x[0, 1:3]` stays a view that shares memory, and `x[:, idx] = v` writes
// through the view into x. The mapping slots are plain C functions on the
// type (tensor_type.cpp) rather than pybind11 methods: `x[i]` is on the hot
// path of every per-sample loop.
#include "array_interface.h"
#include "convert.h"
#include "ops_py.h"

#include <loom/indexing.h>

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

namespace loom::python {
namespace {

using indexing::TensorIndex;

[[noreturn]] void invalid_index(py::handle h) {
  throw py::index_error("only integers, slices (`:`), ellipsis (`...`), None and long, int, byte or bool "
                        "tensors are valid indices (got " + type_name(h) + ")");
}

// A tensor used as an index: 0-d integer tensors act as ints and 0-d masks
// as Python bools, as in PyTorch; the rest must be an index dtype.
TensorIndex tensor_item(Tensor t) {
  const DType d = t.dtype();
  const bool mask = d == DType::Bool || d == DType::UInt8;
  if (!mask && d != DType::Int64 && d != DType::Int32 && d != DType::Int16 && d != DType::Int8)
    throw py::index_error("tensors used as indices must be long, int, byte or bool tensors (got " +
                          std::string(name(d)) + ")");
  if (t.dim() == 0) {
    if (mask) return TensorIndex(t.item<bool>());
    return TensorIndex(t.item<int64_t>());
  }
  if (!mask && d != DType::Int64 && d != DType::Int32) t = t.to(DType::Int64);
  return TensorIndex(std::move(t));
}

// A slice bound: None, or an int (or __index__) clamped to int64 as
// Python clamps slice bounds.
std::optional<int64_t> slice_bound(PyObject* v) {
  if (v == Py_None) return std::nullopt;
  const Py_ssize_t x = PyNumber_AsSsize_t(v, nullptr);  // clamps on overflow
  if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
  return x;
}

TensorIndex slice_item(PyObject* o) {
  auto* sl = reinterpret_cast<PySliceObject*>(o);
  const std::optional<int64_t> step = slice_bound(sl->step);
  if (step && *step <= 0) throw py::value_error("step must be greater than zero");
  return TensorIndex(indexing::Slice(slice_bound(sl->start), slice_bound(sl->stop), step));
}

TensorIndex convert_item(py::handle h) {
  PyObject* o = h.ptr();
  if (o == Py_None) return TensorIndex(indexing::None);
  if (o == Py_Ellipsis) return TensorIndex(indexing::Ellipsis);
  if (PyBool_Check(o)) return TensorIndex(o == Py_True);
  if (PyLong_Check(o)) return TensorIndex(h.cast<int64_t>());
  if (PySlice_Check(o)) return slice_item(o);
  if (is_tensor(h)) return tensor_item(as_tensor(h));
  if (PyFloat_Check(o)) invalid_index(h);
  if (const char kind = array_kind(h)) {  // numpy arrays and scalars
    if (kind == 'f' || kind == 'c') invalid_index(h);
    return tensor_item(tensor_from_data(h, std::nullopt, std::nullopt));
  }
  // numpy integer scalars and anything else with __index__.
  if (!PySequence_Check(o) && PyIndex_Check(o)) {
    const Scalar s = to_scalar(h, "index");  // tells np.bool_ from the integers
    if (s.is_bool()) return TensorIndex(s.to<bool>());
    return TensorIndex(s.to<int64_t>());
  }
  if (!PySequence_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o)) invalid_index(h);
  Tensor t;
  try {
    t = tensor_from_data(h, std::nullopt, std::nullopt);
  } catch (const py::error_already_set&) {
    invalid_index(h);
  } catch (const Error&) {
    invalid_index(h);
  }
  if (t.is_floating_point()) {
    if (t.numel() != 0) invalid_index(h);
    t = t.to(DType::Int64);  // x[[]] selects nothing, as in PyTorch
  }
  return tensor_item(std::move(t));
}

// PyTorch (after numpy's old rule) reads a short list holding slices,
// None, `...`, sequences or tensors as a tuple of indices: x[[0, slice(1)]].
bool sequence_is_tuple(PyObject* o) {
  if (!PyList_Check(o)) return false;
  const Py_ssize_t n = PyList_GET_SIZE(o);
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* e = PyList_GET_ITEM(o, i);
    if (e == Py_None || e == Py_Ellipsis || PySlice_Check(e) || is_tensor_object(e) || PyList_Check(e) ||
        PyTuple_Check(e) || (PySequence_Check(e) && array_kind(e) != 0))
      return true;
  }
  return false;
}

std::vector<TensorIndex> convert_index(PyObject* index) {
  std::vector<TensorIndex> items;
  if (PyTuple_Check(index) || sequence_is_tuple(index)) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(index);
    items.reserve(seq.size());
    for (py::handle e : seq) items.push_back(convert_item(e));
  } else {
    items.push_back(convert_item(index));
  }
  return items;
}

// The core's errors for a bad index are IndexErrors here, as in Python.
indexing::Applied apply_index(const Tensor& self, const std::vector<TensorIndex>& items) {
  try {
    return indexing::apply(self, items);
  } catch (const Error& e) {
    throw py::index_error(e.what());
  }
}

// The value of `t[...] = value` as a tensor of t's dtype and device.
Tensor value_tensor(const Tensor& self, py::handle value) {
  if (is_tensor(value)) {
    const Tensor& v = as_tensor(value);
    if (v.dtype() == self.dtype() && v.device() == self.device()) return v;
    return v.to(self.device(), self.dtype());
  }
  if (is_number(value)) {
    // As PyTorch: the number is cast to t's dtype (2.7 -> 2 for int64),
    // not refused as fill_ refuses a lossy Scalar.
    const Scalar s = to_scalar(value, "value");
    const DType natural = s.is_bool() ? DType::Bool : s.is_integral() ? DType::Int64 : DType::Float64;
    return full({}, s, natural, self.device()).to(self.dtype());
  }
  try {
    return tensor_from_data(value, self.dtype(), self.device());
  } catch (const py::builtin_exception& e) {
    throw py::type_error("can't assign a " + type_name(value) + " to a loom.Tensor: " + e.what());
  } catch (const py::error_already_set&) {
    throw py::type_error("can't assign a " + type_name(value) + " to a loom.Tensor");
  }
}

Tensor getitem(const Tensor& self, PyObject* index) {
  if (PyLong_CheckExact(index)) {  // x[i], the per-sample loop's index
    if (self.dim() == 0) throw py::index_error("invalid index of a 0-dim tensor; use tensor.item() to get the number");
    return self.select(0, py::reinterpret_borrow<py::int_>(index).cast<int64_t>());
  }
  if (self.dim() == 0 && !PyTuple_Check(index) && index != Py_None && index != Py_Ellipsis &&
      !PyBool_Check(index) && !is_tensor_object(index) && !PySequence_Check(index))
    throw py::index_error("invalid index of a 0-dim tensor; use tensor.item() to get the number");
  indexing::Applied a = apply_index(self, convert_index(index));
  if (a.has_advanced) return loom::index(a.view, a.advanced);
  // x[...] and x[:] still return a new tensor object (an alias), as in PyTorch.
  if (a.view.is_same(self)) return self.view(self.sizes());
  return a.view;
}

void setitem(Tensor& self, PyObject* index, py::handle value) {
  indexing::Applied a = apply_index(self, convert_index(index));
  Tensor& dst = a.view;
  if (!a.has_advanced) {
    if (is_number(value)) {
      dst.fill_(value_tensor(self, value).item());
    } else {
      dst.copy_(value_tensor(self, value));
    }
    return;
  }
  loom::index_put_(dst, a.advanced, value_tensor(self, value), /*accumulate=*/false);
}

}  // namespace

PyObject* tensor_getitem(PyObject* self, PyObject* index) {
  try {
    return wrap_tensor(getitem(tensor_of(self), index));
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

int tensor_setitem(PyObject* self, PyObject* index, PyObject* value) {
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "loom.Tensor does not support item deletion");
    return -1;
  }
  try {
    setitem(tensor_of(self), index, value);
    return 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}

void bind_indexing(py::module_& m) {
  TensorClass t(m.attr("Tensor"));
  t.def("__iter__", [](const Tensor& self) {
    if (self.dim() == 0) throw py::type_error("iteration over a 0-d tensor");
    return py::iter(py::cast(unbind(self, 0)));
  });
  // `x in t`: any element equal to x (a number or a tensor), as in PyTorch.
  t.def("__contains__", [](const Tensor& self, py::handle element) {
    if (is_tensor(element)) return any(eq(self, as_tensor(element))).item<bool>();
    if (is_number(element)) return any(eq(self, to_scalar(element, "element"))).item<bool>();
    throw py::type_error("'in <loom.Tensor>' requires a number or a tensor as the left operand, not " +
                         type_name(element));
  });
}

}  // namespace loom::python
