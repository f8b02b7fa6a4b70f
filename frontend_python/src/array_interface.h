// array_interface.h — numpy arrays read and made through numpy's
// Python-level array interface (`__array_interface__`, version 3), never
// through numpy's C structs.
//
// Why: numpy 2 moved fields of its dtype struct (PyArray_Descr.elsize among
// them), and pybind11 2.10's <pybind11/numpy.h> reads numpy 1.x's layout, so
// under numpy 2 every float32 array looked like "a dtype with no loom
// equivalent". The interface's dict (data pointer, shape, byte strides,
// typestr such as "<f4") is the same in numpy 1.x and 2.x, and any object
// exposing it (numpy arrays and their subclasses, numpy scalars, other
// libraries' arrays) converts the same way. Both directions stay zero copy.
#pragma once

#include "convert.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::python {

// What an object's __array_interface__ says about its memory.
struct ArrayInterface {
  void* data = nullptr;          // the first element (the interface's "offset" added)
  bool readonly = false;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in BYTES; row-major ones when the interface says None
  DType dtype = DType::Float32;
  size_t itemsize = 0;
  bool native_byte_order = true;
  std::string typestr;           // numpy's "<f4"
  py::object keep;               // the interface dict: a numpy scalar's holds the
                                 // array its data points into
};

// Cheap test for the Python types that are never arrays (numbers, str,
// lists, tuples, dicts), so hot paths skip the attribute probe.
bool surely_not_array(py::handle obj);

// obj's array interface, or nullopt when it has none. A dtype loom lacks
// (complex, uint16, object, strings ...) raises TypeError naming numpy's
// dtype ("numpy dtype complex64 has no loom equivalent"); a malformed
// interface raises TypeError naming the bad field.
std::optional<ArrayInterface> read_array_interface(py::handle obj);

// The numpy dtype kind of an array-like ('f', 'i', 'b', ...), or 0 when obj
// has no array interface. Never raises for a dtype loom lacks.
char array_kind(py::handle obj);

// A numpy array over `t`'s memory (a CPU tensor of a dtype numpy has): its
// base keeps t's Storage alive, so the memory outlives the tensor object.
py::object numpy_view_of(const Tensor& t);

// The `numpy` module (imported on first use).
py::handle numpy_module();

// Registers the private holder type numpy_view_of hands to numpy.asarray.
void bind_array_interface(py::module_& m);

}  // namespace loom::python
