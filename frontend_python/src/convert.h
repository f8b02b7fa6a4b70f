// convert.h — Python objects to loom values and back: dtypes, devices,
// numbers, nested lists and numpy arrays.
#pragma once

#include "tensor_type.h"

#include <loom/loom.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>

namespace py = pybind11;

namespace loom::python {

// The Python face of a DType: one object per dtype (loom.float32 ...), so
// `t.dtype is loom.float32` holds.
struct PyDType {
  DType value;
};
py::object dtype_object(DType t);
// A loom dtype object; a str name ("float32", "float") is accepted too.
DType to_dtype(py::handle h, const char* what = "dtype");
std::optional<DType> to_optional_dtype(py::handle h);

// "cpu", "cuda:0", "sim" or a loom.device.
Device to_device(py::handle h);

// None or a loom.Generator; TypeError naming `fn` otherwise.
std::optional<Generator> to_optional_generator(py::handle h, const char* fn);

// True for bool, int, float (and numpy scalars of those kinds).
bool is_number(py::handle h);
// A Python number (or a one-element tensor) as a loom Scalar.
Scalar to_scalar(py::handle h, const char* what);
py::object scalar_to_python(const Scalar& s);

// Whether `h` is a loom.Tensor, and the tensor it holds (valid while `h`
// lives).
inline bool is_tensor(py::handle h) { return is_tensor_object(h.ptr()); }
inline const Tensor& as_tensor(py::handle h) { return tensor_of(h.ptr()); }

// loom.tensor(data): nested sequences, numbers, numpy arrays, tensors —
// copied, with PyTorch's dtype inference (bool, then int64, then the
// default float).
Tensor tensor_from_data(py::handle data, std::optional<DType> dtype, std::optional<Device> device);

// Every element as nested Python lists (a number for a 0-d tensor).
py::object to_list(const Tensor& t);

// The Python type name of `h`, for TypeErrors.
std::string type_name(py::handle h);

}  // namespace loom::python
