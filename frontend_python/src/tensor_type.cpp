// tensor_type.cpp — the CPython type behind loom.Tensor: allocation,
// subclassing (nn.Parameter), the number protocol and comparisons.
#include "tensor_type.h"

#include "convert.h"

#include <structmember.h>

#include <cstring>
#include <new>
#include <vector>

namespace loom::python {

PyTypeObject* tensor_type = nullptr;

namespace {

PyObject* alloc(PyTypeObject* type, Tensor t) {
  PyObject* o = type->tp_alloc(type, 0);
  if (!o) return nullptr;
  auto* self = reinterpret_cast<PyTensorObject*>(o);
  new (&self->tensor) Tensor(std::move(t));
  self->dict = nullptr;
  self->weakrefs = nullptr;
  return o;
}

PyObject* tensor_new(PyTypeObject* type, PyObject*, PyObject*) { return alloc(type, Tensor()); }

// The legacy constructor, as PyTorch's torch.Tensor(...):
//   Tensor()            an empty 1-d float32 tensor
//   Tensor(other)       shares other's data
//   Tensor(2, 3)        an uninitialised float32 tensor of that size
//   Tensor(data)        a float32 copy of a list, tuple or array (loom.tensor)
int tensor_init(PyObject* self, PyObject* args, PyObject* kwargs) {
  try {
    const Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (kwargs && PyDict_Size(kwargs) > 0) {
      PyErr_SetString(PyExc_TypeError,
                      "Tensor() takes no keyword arguments (sizes, data or a Tensor); use loom.tensor(data, dtype=..., "
                      "device=...) or loom.empty(size, ...) for more");
      return -1;
    }
    if (n == 0) {
      if (!tensor_of(self).defined()) tensor_of(self) = empty({0});
      return 0;
    }
    PyObject* first = PyTuple_GET_ITEM(args, 0);
    if (n == 1 && is_tensor_object(first)) {
      tensor_of(self) = tensor_of(first);
      return 0;
    }
    py::tuple all = py::reinterpret_borrow<py::tuple>(args);
    // Sizes: ints, or one tuple of ints (a loom.Size).
    py::tuple sizes = n == 1 && PyTuple_Check(first) ? py::reinterpret_borrow<py::tuple>(first) : all;
    bool all_ints = sizes.size() > 0 || n > 1;
    for (py::handle h : sizes) all_ints = all_ints && PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr());
    if (all_ints && (n > 1 || PyLong_Check(first) || PyTuple_Check(first))) {
      std::vector<int64_t> shape;
      for (py::handle h : sizes) shape.push_back(h.cast<int64_t>());
      tensor_of(self) = loom::empty(shape);
      return 0;
    }
    if (n > 1) {
      PyErr_Format(PyExc_TypeError, "Tensor(): %zd arguments must all be ints (sizes); got a %s", n,
                   Py_TYPE(first)->tp_name);
      return -1;
    }
    py::module_ loom = py::module_::import("loom");
    py::object made = loom.attr("tensor")(py::handle(first), py::arg("dtype") = loom.attr("float32"));
    tensor_of(self) = tensor_of(made.ptr());
    return 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}

int tensor_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(reinterpret_cast<PyTensorObject*>(self)->dict);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int tensor_clear(PyObject* self) {
  Py_CLEAR(reinterpret_cast<PyTensorObject*>(self)->dict);
  return 0;
}

void tensor_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  auto* t = reinterpret_cast<PyTensorObject*>(self);
  if (t->weakrefs) PyObject_ClearWeakRefs(self);
  Py_CLEAR(t->dict);
  t->tensor.~Tensor();
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* tensor_repr(PyObject* self) {
  try {
    return PyUnicode_FromString(tensor_of(self).str().c_str());
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

Py_hash_t tensor_hash(PyObject* self) { return _Py_HashPointer(self); }

// The other operand of a binary op: a tensor, or a number made a wrapped
// number on `like`'s device; undefined when it is neither.
Tensor operand(PyObject* o, const Tensor& like) {
  if (is_tensor_object(o)) return tensor_of(o);
  if (PyFloat_CheckExact(o)) return scalar_tensor(Scalar(PyFloat_AS_DOUBLE(o)), like.device());
  if (PyBool_Check(o)) return scalar_tensor(Scalar(o == Py_True), like.device());
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (!overflow) return scalar_tensor(Scalar(static_cast<int64_t>(v)), like.device());
    return Tensor();
  }
  if (is_number(o)) return scalar_tensor(to_scalar(o, "operand"), like.device());
  return Tensor();
}

using Binary = Tensor (*)(const Tensor&, const Tensor&);

template <Binary F>
PyObject* binary_slot(PyObject* a, PyObject* b) {
  try {
    if (is_tensor_object(a)) {
      const Tensor& x = tensor_of(a);
      Tensor y = operand(b, x);
      if (!y.defined()) Py_RETURN_NOTIMPLEMENTED;
      return wrap_tensor(F(x, y));
    }
    const Tensor& y = tensor_of(b);  // reflected: `2 - t`
    Tensor x = operand(a, y);
    if (!x.defined()) Py_RETURN_NOTIMPLEMENTED;
    return wrap_tensor(F(x, y));
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

using InPlace = void (*)(Tensor&, const Tensor&);

template <InPlace F>
PyObject* inplace_slot(PyObject* a, PyObject* b) {
  try {
    Tensor& x = tensor_of(a);
    Tensor y = operand(b, x);
    if (!y.defined()) Py_RETURN_NOTIMPLEMENTED;
    F(x, y);
    Py_INCREF(a);
    return a;
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

Tensor add_f(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor sub_f(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor mul_f(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor div_f(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor floordiv_f(const Tensor& a, const Tensor& b) { return floor_divide(a, b); }
Tensor mod_f(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor matmul_f(const Tensor& a, const Tensor& b) { return matmul(a, b); }
Tensor and_f(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor or_f(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor xor_f(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }

void iadd_f(Tensor& a, const Tensor& b) { a.add_(b); }
void isub_f(Tensor& a, const Tensor& b) { a.sub_(b); }
void imul_f(Tensor& a, const Tensor& b) { a.mul_(b); }
void idiv_f(Tensor& a, const Tensor& b) { a.div_(b); }
void imod_f(Tensor& a, const Tensor& b) { a.remainder_(b); }
void imatmul_f(Tensor& a, const Tensor& b) { a.copy_(matmul(a, b)); }
void iand_f(Tensor& a, const Tensor& b) { a.bitwise_and_(b); }
void ior_f(Tensor& a, const Tensor& b) { a.bitwise_or_(b); }
void ixor_f(Tensor& a, const Tensor& b) { a.bitwise_xor_(b); }
void ifloordiv_f(Tensor& a, const Tensor& b) { a.div_(b, std::string("floor")); }

Tensor pow_f(const Tensor& a, const Tensor& b) { return pow(a, b); }
void ipow_f(Tensor& a, const Tensor& b) { a.pow_(b); }

PyObject* power_slot(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
  return binary_slot<pow_f>(a, b);
}
PyObject* ipower_slot(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
  return inplace_slot<ipow_f>(a, b);
}

template <Tensor (*F)(const Tensor&)>
PyObject* unary_slot(PyObject* a) {
  try {
    return wrap_tensor(F(tensor_of(a)));
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}
Tensor neg_f(const Tensor& a) { return neg(a); }
Tensor pos_f(const Tensor& a) { return a; }
Tensor abs_f(const Tensor& a) { return abs(a); }
Tensor invert_f(const Tensor& a) {
  if (a.dtype() == DType::Bool) return logical_not(a);
  LOOM_CHECK(!a.is_floating_point(), "~ (bitwise not) is only supported for integer and bool tensors, got ",
             name(a.dtype()));
  return sub(neg(a), scalar_tensor(Scalar(int64_t{1}), a.device()));
}

PyObject* richcompare(PyObject* a, PyObject* b, int op) {
  // Python calls this with the tensor first, or reflected with the
  // comparison already swapped (a < t arrives as t > a).
  try {
    const bool swapped = !is_tensor_object(a);
    PyObject* self = swapped ? b : a;
    PyObject* other = swapped ? a : b;
    const Tensor& x = tensor_of(self);
    Tensor y = operand(other, x);
    if (!y.defined()) Py_RETURN_NOTIMPLEMENTED;
    switch (op) {
      case Py_EQ: return wrap_tensor(eq(x, y));
      case Py_NE: return wrap_tensor(ne(x, y));
      case Py_LT: return wrap_tensor(lt(x, y));
      case Py_LE: return wrap_tensor(le(x, y));
      case Py_GT: return wrap_tensor(gt(x, y));
      case Py_GE: return wrap_tensor(ge(x, y));
    }
    Py_RETURN_NOTIMPLEMENTED;
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

int bool_slot(PyObject* a) {
  try {
    const Tensor& t = tensor_of(a);
    if (t.numel() != 1) {
      PyErr_SetString(PyExc_RuntimeError, "Boolean value of Tensor with more than one value is ambiguous");
      return -1;
    }
    return t.item<double>() != 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}

// Tensor._make_subclass(cls, data, requires_grad=False): how nn.Parameter
// is made, as in PyTorch.
PyObject* make_subclass(PyObject*, PyObject* args) {
  PyObject* cls = nullptr;
  PyObject* data = nullptr;
  int requires_grad = 0;
  if (!PyArg_ParseTuple(args, "OO|p", &cls, &data, &requires_grad)) return nullptr;
  if (!PyType_Check(cls) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), tensor_type) ||
      !is_tensor_object(data)) {
    PyErr_SetString(PyExc_TypeError, "_make_subclass(cls, data, requires_grad): cls must subclass Tensor and data be a Tensor");
    return nullptr;
  }
  try {
    Tensor t = tensor_of(data).detach();
    if (requires_grad) t.requires_grad_(true);
    return alloc(reinterpret_cast<PyTypeObject*>(cls), std::move(t));
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

PyMethodDef methods[] = {
    {"_make_subclass", make_subclass, METH_VARARGS | METH_STATIC,
     "_make_subclass(cls, data, requires_grad=False): a `cls` instance sharing data's memory"},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(PyTensorObject, dict), READONLY, nullptr},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(PyTensorObject, weakrefs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

}  // namespace

PyObject* wrap_tensor(Tensor t) {
  if (!t.defined()) Py_RETURN_NONE;
  return alloc(tensor_type, std::move(t));
}

void create_tensor_type(py::module_& m) {
  static PyType_Slot slots[] = {
      {Py_tp_new, reinterpret_cast<void*>(tensor_new)},
      {Py_tp_init, reinterpret_cast<void*>(tensor_init)},
      {Py_tp_dealloc, reinterpret_cast<void*>(tensor_dealloc)},
      {Py_tp_traverse, reinterpret_cast<void*>(tensor_traverse)},
      {Py_tp_clear, reinterpret_cast<void*>(tensor_clear)},
      {Py_tp_repr, reinterpret_cast<void*>(tensor_repr)},
      {Py_tp_hash, reinterpret_cast<void*>(tensor_hash)},
      {Py_tp_richcompare, reinterpret_cast<void*>(richcompare)},
      {Py_tp_methods, methods},
      {Py_mp_subscript, reinterpret_cast<void*>(tensor_getitem)},
      {Py_mp_ass_subscript, reinterpret_cast<void*>(tensor_setitem)},
      {Py_tp_members, members},
      {Py_nb_add, reinterpret_cast<void*>(binary_slot<add_f>)},
      {Py_nb_subtract, reinterpret_cast<void*>(binary_slot<sub_f>)},
      {Py_nb_multiply, reinterpret_cast<void*>(binary_slot<mul_f>)},
      {Py_nb_true_divide, reinterpret_cast<void*>(binary_slot<div_f>)},
      {Py_nb_floor_divide, reinterpret_cast<void*>(binary_slot<floordiv_f>)},
      {Py_nb_remainder, reinterpret_cast<void*>(binary_slot<mod_f>)},
      {Py_nb_power, reinterpret_cast<void*>(power_slot)},
      {Py_nb_matrix_multiply, reinterpret_cast<void*>(binary_slot<matmul_f>)},
      {Py_nb_and, reinterpret_cast<void*>(binary_slot<and_f>)},
      {Py_nb_or, reinterpret_cast<void*>(binary_slot<or_f>)},
      {Py_nb_xor, reinterpret_cast<void*>(binary_slot<xor_f>)},
      {Py_nb_inplace_add, reinterpret_cast<void*>(inplace_slot<iadd_f>)},
      {Py_nb_inplace_subtract, reinterpret_cast<void*>(inplace_slot<isub_f>)},
      {Py_nb_inplace_multiply, reinterpret_cast<void*>(inplace_slot<imul_f>)},
      {Py_nb_inplace_true_divide, reinterpret_cast<void*>(inplace_slot<idiv_f>)},
      {Py_nb_inplace_floor_divide, reinterpret_cast<void*>(inplace_slot<ifloordiv_f>)},
      {Py_nb_inplace_remainder, reinterpret_cast<void*>(inplace_slot<imod_f>)},
      {Py_nb_inplace_power, reinterpret_cast<void*>(ipower_slot)},
      {Py_nb_inplace_matrix_multiply, reinterpret_cast<void*>(inplace_slot<imatmul_f>)},
      {Py_nb_inplace_and, reinterpret_cast<void*>(inplace_slot<iand_f>)},
      {Py_nb_inplace_or, reinterpret_cast<void*>(inplace_slot<ior_f>)},
      {Py_nb_inplace_xor, reinterpret_cast<void*>(inplace_slot<ixor_f>)},
      {Py_nb_negative, reinterpret_cast<void*>(unary_slot<neg_f>)},
      {Py_nb_positive, reinterpret_cast<void*>(unary_slot<pos_f>)},
      {Py_nb_absolute, reinterpret_cast<void*>(unary_slot<abs_f>)},
      {Py_nb_invert, reinterpret_cast<void*>(unary_slot<invert_f>)},
      {Py_nb_bool, reinterpret_cast<void*>(bool_slot)},
      {0, nullptr}};
  static PyType_Spec spec = {"loom._C.Tensor", sizeof(PyTensorObject), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (!type) throw py::error_already_set();
  tensor_type = reinterpret_cast<PyTypeObject*>(type);
  Py_INCREF(type);  // the module's reference below; tensor_type keeps its own
  m.attr("Tensor") = py::reinterpret_steal<py::object>(type);
  py::setattr(reinterpret_cast<PyObject*>(tensor_type), "__module__", py::str("loom"));
}

}  // namespace loom::python
