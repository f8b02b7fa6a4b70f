// errors.cpp — loom::Error to Python exceptions (see errors.h).
#include "errors.h"

#include <loom/error.h>
#include <pybind11/pybind11.h>

#include <cstring>

namespace loom::python {
namespace py = pybind11;

namespace {

// Created once, on first use; the module holds the other reference.
PyObject* new_class(const char* name, const char* doc, PyObject* base) {
  return PyErr_NewExceptionWithDoc(name, doc, base, nullptr);
}

const char* status_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidArgument: return "INVALID_ARGUMENT";
    case ErrorKind::OutOfMemory: return "OUT_OF_MEMORY";
    case ErrorKind::Unsupported: return "UNSUPPORTED";
    case ErrorKind::NotFound: return "NOT_FOUND";
    case ErrorKind::Device: return "DEVICE_ERROR";
    case ErrorKind::Internal: return "INTERNAL";
  }
  return "INTERNAL";
}

PyObject* class_for(const Error& e) {
  switch (e.kind()) {
    case ErrorKind::OutOfMemory: return out_of_memory_error();
    case ErrorKind::Device: return device_error();
    case ErrorKind::Unsupported: return unsupported_error();
    default: break;
  }
  const char* msg = e.what();
  return std::strstr(msg, "out of range") || std::strstr(msg, "out of bounds") ? PyExc_IndexError
                                                                                 : PyExc_RuntimeError;
}

// Raises `type(message)` with `.status` set.
void raise_with_status(PyObject* type, const char* message, const char* status) {
  PyObject* text = PyUnicode_DecodeUTF8(message, static_cast<Py_ssize_t>(std::strlen(message)), "replace");
  PyObject* exc = text ? PyObject_CallOneArg(type, text) : nullptr;
  Py_XDECREF(text);
  if (!exc) return;  // the failure's own Python error stays set
  PyObject* s = PyUnicode_FromString(status);
  if (s) PyObject_SetAttrString(exc, "status", s);
  Py_XDECREF(s);
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
}

}  // namespace

PyObject* out_of_memory_error() {
  static PyObject* type = new_class(
      "loom.OutOfMemoryError",
      "A device could not allocate memory (the message names device and bytes). "
      "A RuntimeError, like torch.cuda.OutOfMemoryError. status: 'OUT_OF_MEMORY'.",
      PyExc_RuntimeError);
  return type;
}

PyObject* device_error() {
  static PyObject* type = new_class(
      "loom.DeviceError",
      "A device or its plugin failed (a kernel launch, the driver, a lost device); the "
      "message names the op, device and plugin. A RuntimeError. status: 'DEVICE_ERROR'.",
      PyExc_RuntimeError);
  return type;
}

PyObject* unsupported_error() {
  static PyObject* type = new_class(
      "loom.UnsupportedError",
      "No code could run this call: a kernel declined it (its reason is quoted) and nothing "
      "came after, or LOOM_FALLBACK=error forbade the fallback. A NotImplementedError "
      "(so a RuntimeError). status: 'UNSUPPORTED'.",
      PyExc_NotImplementedError);
  return type;
}

void set_python_error() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const Error& e) {
    raise_with_status(class_for(e), e.what(), status_name(e.kind()));
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

}  // namespace loom::python
