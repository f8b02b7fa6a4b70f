// errors.h — how loom's C++ errors reach Python.
//
// A loom::Error becomes a Python exception of the class its kind maps to,
// with the same message and a `status` attribute naming the ABI status it
// carried ("INVALID_ARGUMENT", "OUT_OF_MEMORY", "UNSUPPORTED", "NOT_FOUND",
// "DEVICE_ERROR", "INTERNAL"), so a program can tell a plugin's device error
// from a kernel that declined without parsing text:
//   OUT_OF_MEMORY -> loom.OutOfMemoryError (RuntimeError, as torch's)
//   DEVICE_ERROR  -> loom.DeviceError      (RuntimeError; torch.AcceleratorError's role)
//   UNSUPPORTED   -> loom.UnsupportedError (NotImplementedError, itself a
//                    RuntimeError, as PyTorch's "could not run ... on backend")
//   anything else -> RuntimeError, or IndexError for an index out of range.
#pragma once

#include <Python.h>

namespace loom::python {

// Turns the C++ exception in flight into a Python error (for slots, which
// pybind11 does not wrap, and for pybind11's translator).
void set_python_error();

// The exception classes (borrowed references, created on first use).
PyObject* out_of_memory_error();
PyObject* device_error();
PyObject* unsupported_error();

}  // namespace loom::python
