// tensor_type.h — loom.Tensor as a hand-written CPython type.
//
// The object holds a loom::Tensor inline: no holder allocation and no
// pybind11 instance registry per tensor, and the arithmetic operators are
// number-protocol slots that call the C++ ops directly. That is what keeps
// a 1-element `a + b` near the cost of the op itself (PyTorch binds its
// Tensor the same way, for the same reason). Everything else — methods,
// properties — is ordinary pybind11 code attached to the type through
// TensorClass, and a type_caster lets every pybind11 function take and
// return loom::Tensor by value.
#pragma once

#include "errors.h"

#include <loom/loom.h>
#include <pybind11/pybind11.h>

#include <utility>

namespace loom::python {
namespace py = pybind11;

struct PyTensorObject {
  PyObject_HEAD
  Tensor tensor;
  PyObject* dict;
  PyObject* weakrefs;
};

// The type (set by create_tensor_type) and the fast checks on it.
extern PyTypeObject* tensor_type;
inline bool is_tensor_object(PyObject* o) { return PyObject_TypeCheck(o, tensor_type); }
inline Tensor& tensor_of(PyObject* o) { return reinterpret_cast<PyTensorObject*>(o)->tensor; }
// A new reference to a fresh loom.Tensor holding `t` (None for undefined).
PyObject* wrap_tensor(Tensor t);

// Creates loom._C.Tensor and adds it to `m`.
void create_tensor_type(py::module_& m);

// The mapping slots, t[index] and t[index] = value (indexing_py.cpp).
PyObject* tensor_getitem(PyObject* self, PyObject* index);
int tensor_setitem(PyObject* self, PyObject* index, PyObject* value);


// pybind11-style method and property registration on the hand-written type.
class TensorClass {
 public:
  explicit TensorClass(py::handle cls) : cls_(cls) {}

  template <class F, class... Extra>
  TensorClass& def(const char* name, F&& f, const Extra&... extra) {
    py::cpp_function cf(std::forward<F>(f), py::name(name), py::is_method(cls_),
                        py::sibling(py::getattr(cls_, name, py::none())), extra...);
    cls_.attr(name) = cf;
    return *this;
  }
  template <class F, class... Extra>
  TensorClass& def_static(const char* name, F&& f, const Extra&... extra) {
    py::cpp_function cf(std::forward<F>(f), py::name(name), py::scope(cls_), extra...);
    cls_.attr(name) = py::staticmethod(cf);
    return *this;
  }
  template <class Get>
  TensorClass& def_property_readonly(const char* name, Get&& get) {
    py::cpp_function g(std::forward<Get>(get), py::is_method(cls_));
    cls_.attr(name) = property()(g, py::none());
    return *this;
  }
  template <class Get, class Set>
  TensorClass& def_property(const char* name, Get&& get, Set&& set) {
    py::cpp_function g(std::forward<Get>(get), py::is_method(cls_));
    py::cpp_function s(std::forward<Set>(set), py::is_method(cls_));
    cls_.attr(name) = property()(g, s);
    return *this;
  }

 private:
  static py::object property() { return py::module_::import("builtins").attr("property"); }
  py::handle cls_;
};

}  // namespace loom::python

namespace pybind11::detail {
// loom::Tensor by value across every pybind11 binding (the object itself is
// a reference-counted handle, so the copy shares the tensor).
template <>
struct type_caster<loom::Tensor> {
  PYBIND11_TYPE_CASTER(loom::Tensor, const_name("loom.Tensor"));
  bool load(handle src, bool) {
    if (!src || !loom::python::is_tensor_object(src.ptr())) return false;
    value = loom::python::tensor_of(src.ptr());
    return true;
  }
  static handle cast(const loom::Tensor& t, return_value_policy, handle) {
    return loom::python::wrap_tensor(t);
  }
};
}  // namespace pybind11::detail
