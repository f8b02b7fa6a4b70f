// interop_py.cpp — numpy and DLPack, zero copy both ways (see ops_py.h).
//
// Who owns what:
//  - Tensor.numpy(): the array's base is a capsule holding a reference to
//    the tensor's Storage, so the memory lives as long as the array, even
//    when the tensor object dies or is given a new storage (out= resizes).
//  - loom.from_numpy(a): the Storage holds a strong reference to `a` and
//    drops it, taking the GIL, when the last tensor viewing it goes.
//  - Tensor.__dlpack__(): the capsule owns a DLManagedTensor[Versioned]
//    whose manager_ctx holds a loom::Tensor. A consumer renames the capsule
//    "used_dltensor[_versioned]" and from then on owns the struct (it calls
//    the deleter when done); a capsule nobody consumed calls the deleter from
//    its own destructor.
//  - loom.from_dlpack(x): loom is the consumer; it renames the capsule and
//    its Storage calls the producer's deleter, with the GIL held (numpy's
//    deleter decrefs an array without taking it), when the last view goes.
//
// Negative strides (numpy's a[::-1]) cannot be represented in loom: both
// from_numpy and from_dlpack raise ValueError, as torch.from_numpy does,
// rather than copying behind the caller's back.
#include "array_interface.h"
#include "convert.h"
#include "ops_py.h"

#include <loom/autograd.h>

#include <optional>
#include <string>
#include <vector>

namespace loom::python {
namespace {

// --- DLPack's ABI, written from the spec (dlpack.h v1.0) ------------------
// Debian ships only the 0.6 header, which has neither kDLBool nor the
// versioned struct; the layout below is what every DLPack version shares.
namespace dl {
enum : int32_t { kCPU = 1, kCUDA = 2 };
struct Device {
  int32_t device_type;  // a C enum in the spec: int-sized
  int32_t device_id;
};
struct DataType {
  uint8_t code;  // kDLInt=0, kDLUInt=1, kDLFloat=2, kDLBfloat=4, kDLBool=6
  uint8_t bits;
  uint16_t lanes;
};
struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL means row-major
  uint64_t byte_offset;
};
// The unversioned struct of DLPack < 1.0, in capsules named "dltensor".
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};
struct Version {
  uint32_t major;
  uint32_t minor;
};
// DLPack 1.x, in capsules named "dltensor_versioned".
struct ManagedTensorVersioned {
  Version version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  uint64_t flags;
  Tensor dl_tensor;
};
constexpr uint64_t kFlagReadOnly = 1u << 0;
constexpr uint64_t kFlagIsCopied = 1u << 1;
static_assert(sizeof(Tensor) == 48 && sizeof(ManagedTensor) == 64 && sizeof(ManagedTensorVersioned) == 80,
              "DLPack structs must match the C ABI");
}  // namespace dl

template <class Managed>
struct CapsuleNames;
template <>
struct CapsuleNames<dl::ManagedTensor> {
  static constexpr const char* fresh = "dltensor";
  static constexpr const char* used = "used_dltensor";
};
template <>
struct CapsuleNames<dl::ManagedTensorVersioned> {
  static constexpr const char* fresh = "dltensor_versioned";
  static constexpr const char* used = "used_dltensor_versioned";
};

// Runs f with the GIL, from any thread, keeping any Python error in flight.
// After interpreter teardown it does nothing: leaking at exit beats touching
// a finalized interpreter.
template <class F>
void with_gil(F&& f) {
  if (!Py_IsInitialized()) return;
  const PyGILState_STATE state = PyGILState_Ensure();
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  f();
  PyErr_Restore(type, value, traceback);
  PyGILState_Release(state);
}

[[noreturn]] void throw_value_error(const std::string& msg) { throw py::value_error(msg); }

// A Python (int, int) such as max_version=(1, 0), or a TypeError naming `what`.
std::pair<int64_t, int64_t> int_pair(py::handle h, const char* what) {
  try {
    return h.cast<std::pair<int64_t, int64_t>>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(what) + " must be a tuple of two ints, not " + type_name(h));
  }
}

void warn(const std::string& msg) {
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw py::error_already_set();
}

// --- foreign memory as a loom tensor ---------------------------------------

// A checked strided layout (strides in elements) over `nbytes` of memory.
struct Layout {
  std::vector<int64_t> shape, strides;
  size_t nbytes = 0;
};

// Checks that loom can view memory at `data` laid out so; `who` prefixes
// the errors. Strides that are never used (a dimension of size 1, an empty
// tensor) are replaced by row-major ones, so numpy's a[::-1] of a 1-long
// axis is fine.
Layout checked_layout(const void* data, std::vector<int64_t> shape, std::vector<int64_t> strides,
                      size_t itemsize, const std::string& who) {
  int64_t numel = 1;
  for (const int64_t s : shape) {
    if (s < 0) throw_value_error(who + ": negative size " + std::to_string(s) + " in shape");
    numel *= s;
  }
  const DimVector row_major = contiguous_strides(shape);
  int64_t last = 0;  // offset of the last element, in elements
  for (size_t i = 0; i < shape.size(); ++i) {
    if (numel == 0 || shape[i] == 1) strides[i] = row_major[i];
    if (strides[i] < 0)
      throw_value_error(who + ": at least one stride is negative, and loom tensors with negative strides "
                        "are not supported (copy the array first, e.g. with array.copy())");
    last += (shape[i] - 1) * strides[i];
  }
  // Kernels take element pointers as naturally aligned (the compiler's
  // vector loops may rely on it), so misaligned memory is refused.
  if (numel != 0 && reinterpret_cast<uintptr_t>(data) % itemsize != 0)
    throw_value_error(who + ": the data is not aligned to its " + std::to_string(itemsize) +
                      "-byte elements; copy it first");
  const size_t nbytes = numel == 0 ? 0 : static_cast<size_t>(last + 1) * itemsize;
  return {std::move(shape), std::move(strides), nbytes};
}

Tensor view_memory(Device device, DType dtype, void* data, const Layout& layout, StorageDeleter deleter) {
  Storage storage = wrap_storage(device, data, layout.nbytes, deleter);
  return Tensor(detail::make_intrusive<TensorImpl>(std::move(storage), dtype, layout.shape, layout.strides, 0));
}

void release_pyobject(void* obj, int32_t, void*, size_t) {
  with_gil([obj] { Py_DECREF(static_cast<PyObject*>(obj)); });
}

// --- numpy -------------------------------------------------------------------

py::object to_numpy(const Tensor& self, bool force) {
  // force: torch's detach().cpu() first (a copy only when not on the CPU).
  const Tensor t = force ? self.detach().cpu() : self;
  if (t.device().type_name() != "cpu")
    throw py::type_error("can't convert " + t.device().str() +
                         " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.");
  if (t.requires_grad())
    throw std::runtime_error("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  return numpy_view_of(t);
}

// Any object with numpy's __array_interface__ (numpy arrays and their
// subclasses first of all), zero copy.
Tensor from_numpy(py::handle obj) {
  std::optional<ArrayInterface> a = read_array_interface(obj);
  if (!a) throw py::type_error("expected np.ndarray (got " + type_name(obj) + ")");
  if (!a->native_byte_order)
    throw_value_error("given numpy array has byte order different from the native byte order. "
                      "Conversion between byte orders is not supported; use array.astype(array.dtype.newbyteorder('='))");
  const auto itemsize = static_cast<int64_t>(a->itemsize);
  std::vector<int64_t> strides;
  for (const int64_t s : a->strides) {
    if (s % itemsize != 0)
      throw_value_error("given numpy array strides not a multiple of the element byte size. "
                        "Copy the numpy array to reallocate the memory.");
    strides.push_back(s / itemsize);
  }
  const Layout layout = checked_layout(a->data, std::move(a->shape), std::move(strides), a->itemsize, "loom.from_numpy");
  if (a->readonly)
    warn("The given NumPy array is not writable, and loom does not support non-writable tensors: writing to "
         "this tensor writes to the array's memory anyway. Copy the array, or make it writable, first.");
  // The Storage holds the array and its interface dict (a numpy scalar's
  // dict holds the memory), released by release_pyobject.
  PyObject* owner = py::make_tuple(obj, a->keep).release().ptr();
  return view_memory(cpu_device(), a->dtype, a->data, layout, StorageDeleter{release_pyobject, owner});
}

// --- DLPack export -----------------------------------------------------------

dl::Device dlpack_device(Device d) {
  const std::string& type = d.type_name();
  if (type == "cpu") return {dl::kCPU, 0};
  if (type == "cuda") return {dl::kCUDA, d.index};
  throw py::buffer_error("loom: a tensor on " + d.str() + " cannot be exported through DLPack "
                         "(DLPack has no device type for '" + type + "'; cpu and cuda do)");
}

dl::DataType dlpack_dtype(DType t) {
  switch (t) {
#define LOOM_DL_DTYPE(Name, py_name, loom_code, dl_code, nbits) \
  case DType::Name:                                             \
    return {dl_code, nbits, 1};
    LOOM_DTYPE_LIST(LOOM_DL_DTYPE)
#undef LOOM_DL_DTYPE
  }
  throw std::logic_error("dlpack_dtype: unknown dtype");
}

// What manager_ctx points to: the tensor (which keeps its storage alive)
// and the arrays the DLTensor points into, with the managed struct itself in
// the same allocation.
template <class Managed>
struct Export {
  Managed managed{};
  Tensor tensor;
  std::vector<int64_t> shape, strides;
};

template <class Managed>
void capsule_destructor(PyObject* capsule) {
  // Renamed "used_..." means a consumer owns the struct now.
  if (!PyCapsule_IsValid(capsule, CapsuleNames<Managed>::fresh)) return;
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, CapsuleNames<Managed>::fresh));
  if (m->deleter) m->deleter(m);
}

template <class Managed>
py::capsule export_capsule(const Tensor& t, dl::Device device, uint64_t flags) {
  auto* e = new Export<Managed>{{}, t, t.shape(), {t.strides().begin(), t.strides().end()}};
  Managed& m = e->managed;
  if constexpr (std::is_same_v<Managed, dl::ManagedTensorVersioned>) {
    m.version = {1, 0};
    m.flags = flags;
  }
  m.manager_ctx = e;
  m.deleter = [](Managed* self) { delete static_cast<Export<Managed>*>(self->manager_ctx); };
  // data is the first element and byte_offset 0, as torch does: torch 1.13
  // ignores byte_offset when it imports.
  m.dl_tensor = dl::Tensor{t.numel() ? t.data_ptr() : nullptr, device, static_cast<int32_t>(t.dim()),
                           dlpack_dtype(t.dtype()), e->shape.data(), e->strides.data(), 0};
  PyObject* capsule = PyCapsule_New(&m, CapsuleNames<Managed>::fresh, capsule_destructor<Managed>);
  if (!capsule) {
    delete e;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

// Tensor.__dlpack__ of the array API standard (2023.12).
py::capsule to_dlpack(const Tensor& self, py::handle stream, py::handle max_version, py::handle dl_device,
                      py::handle copy) {
  const dl::Device device = dlpack_device(self.device());
  if (self.requires_grad()) throw std::runtime_error("Can't export tensors that require gradient, use tensor.detach()");
  if (!dl_device.is_none()) {
    const auto want = int_pair(dl_device, "__dlpack__: dl_device");
    if (want.first != device.device_type || want.second != device.device_id)
      throw py::buffer_error("loom: __dlpack__ cannot move a tensor to DLPack device (" + std::to_string(want.first) +
                             ", " + std::to_string(want.second) + "); it is on " + self.device().str());
  }
  if (device.device_type == dl::kCPU) {
    if (!stream.is_none()) throw_value_error("__dlpack__: stream must be None for a cpu tensor");
  } else if (stream.is_none() || stream.cast<int64_t>() != -1) {
    // The consumer will read on its stream; loom does not know that stream,
    // so all of loom's work on the device must be finished first (-1 asks
    // for no synchronization).
    synchronize(self.device());
  }
  const bool copied = !copy.is_none() && copy.cast<bool>();
  Tensor t = self;
  if (copied) {
    autograd::NoGradGuard no_grad;
    t = self.clone();
  }
  if (!max_version.is_none() && int_pair(max_version, "__dlpack__: max_version").first >= 1) {
    // loom tensors are always writable, so the read-only flag is never set.
    return export_capsule<dl::ManagedTensorVersioned>(t, device, copied ? dl::kFlagIsCopied : 0);
  }
  return export_capsule<dl::ManagedTensor>(t, device, 0);
}

// --- DLPack import -----------------------------------------------------------

Device loom_device(dl::Device d) {
  if (d.device_type == dl::kCPU) return cpu_device();
  const int cuda = d.device_type == dl::kCUDA ? find_device_type_slot("cuda") : -1;
  if (cuda >= 0) return Device(static_cast<int16_t>(cuda), static_cast<int16_t>(d.device_id));
  throw py::buffer_error("loom.from_dlpack: no loom device for DLPack device type " +
                         std::to_string(d.device_type) +
                         (d.device_type == dl::kCUDA ? " (kDLCUDA; no cuda plugin is loaded)" : ""));
}

DType loom_dtype(dl::DataType t) {
#define LOOM_FROM_DL_DTYPE(Name, py_name, loom_code, dl_code, nbits) \
  if (t.code == (dl_code) && t.bits == (nbits) && t.lanes == 1) return DType::Name;
  LOOM_DTYPE_LIST(LOOM_FROM_DL_DTYPE)
#undef LOOM_FROM_DL_DTYPE
  throw py::type_error("loom.from_dlpack: DLPack dtype (code " + std::to_string(t.code) + ", bits " +
                       std::to_string(t.bits) + ", lanes " + std::to_string(t.lanes) + ") has no loom dtype");
}

template <class Managed>
void release_dlpack(void* managed, int32_t, void*, size_t) {
  auto* m = static_cast<Managed*>(managed);
  if (m->deleter) with_gil([m] { m->deleter(m); });
}

// Consumes a capsule named CapsuleNames<Managed>::fresh. Everything is
// checked before the capsule is renamed, so on error it still owns (and
// frees) the tensor.
template <class Managed>
Tensor import_capsule(PyObject* capsule) {
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, CapsuleNames<Managed>::fresh));
  if (!m) throw py::error_already_set();
  if constexpr (std::is_same_v<Managed, dl::ManagedTensorVersioned>) {
    if (m->version.major != 1)
      throw py::buffer_error("loom.from_dlpack: DLPack " + std::to_string(m->version.major) + "." +
                             std::to_string(m->version.minor) + " is not supported (loom reads 1.x)");
  }
  const dl::Tensor& d = m->dl_tensor;
  const Device device = loom_device(d.device);
  const DType dtype = loom_dtype(d.dtype);
  if (d.ndim < 0) throw_value_error("loom.from_dlpack: negative ndim " + std::to_string(d.ndim));
  std::vector<int64_t> shape(d.shape, d.shape + d.ndim);
  std::vector<int64_t> strides;
  if (d.strides) {
    strides.assign(d.strides, d.strides + d.ndim);
  } else {
    const DimVector row_major = contiguous_strides(shape);
    strides.assign(row_major.begin(), row_major.end());
  }
  char* data = static_cast<char*>(d.data) + d.byte_offset;
  const Layout layout = checked_layout(data, std::move(shape), std::move(strides), itemsize(dtype), "loom.from_dlpack");
  if constexpr (std::is_same_v<Managed, dl::ManagedTensorVersioned>) {
    if (m->flags & dl::kFlagReadOnly)
      warn("loom.from_dlpack: the DLPack tensor is read-only, and loom does not support non-writable tensors: "
           "writing to this tensor writes to the producer's memory anyway.");
  }
  Tensor t = view_memory(device, dtype, data, layout,
                         StorageDeleter{release_dlpack<Managed>, m});
  PyCapsule_SetName(capsule, CapsuleNames<Managed>::used);
  return t;
}

Tensor from_dlpack(py::handle obj) {
  py::object capsule;
  if (PyCapsule_CheckExact(obj.ptr())) {
    capsule = py::reinterpret_borrow<py::object>(obj);
  } else if (py::hasattr(obj, "__dlpack__")) {
    // Ask for DLPack 1.x; producers older than that (numpy < 2, torch < 2.3)
    // do not take max_version and give the unversioned capsule.
    try {
      capsule = obj.attr("__dlpack__")(py::arg("max_version") = py::make_tuple(1, 0));
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      capsule = obj.attr("__dlpack__")();
    }
  } else {
    throw py::type_error("loom.from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got " +
                         type_name(obj));
  }
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, CapsuleNames<dl::ManagedTensorVersioned>::fresh))
    return import_capsule<dl::ManagedTensorVersioned>(c);
  if (PyCapsule_IsValid(c, CapsuleNames<dl::ManagedTensor>::fresh)) return import_capsule<dl::ManagedTensor>(c);
  if (PyCapsule_IsValid(c, CapsuleNames<dl::ManagedTensor>::used) ||
      PyCapsule_IsValid(c, CapsuleNames<dl::ManagedTensorVersioned>::used))
    throw_value_error("loom.from_dlpack: this DLPack capsule was already consumed (a capsule can be used once)");
  const char* capsule_name = PyCapsule_CheckExact(c) ? PyCapsule_GetName(c) : nullptr;
  throw py::type_error("loom.from_dlpack: expected a DLPack capsule named 'dltensor' or 'dltensor_versioned', got " +
                        (capsule_name ? "a capsule named '" + std::string(capsule_name) + "'" : type_name(capsule)));
}

}  // namespace

void bind_interop(py::module_& m) {
  bind_array_interface(m);
  TensorClass t(m.attr("Tensor"));
  t.def("numpy", &to_numpy, py::kw_only(), py::arg("force") = false,
        "A numpy array sharing this CPU tensor's memory.");
  t.def(
      "__array__",
      // numpy 2 passes copy= (None: copy only if needed, True: always,
      // False: never).
      [](const Tensor& self, py::handle dtype, py::handle copy) -> py::object {
        py::object a = to_numpy(self, false);
        const bool always = !copy.is_none() && copy.cast<bool>();
        const bool never = !copy.is_none() && !copy.cast<bool>();
        const py::object want = dtype.is_none() ? py::none() : numpy_module().attr("dtype")(dtype);
        if (!dtype.is_none() && !py::object(a.attr("dtype")).equal(want)) {
          if (never)
            throw_value_error("Unable to avoid copy while creating an array as requested: the tensor is " +
                              std::string(name(self.dtype())) + ", not " + std::string(py::str(dtype)));
          return a.attr("astype")(dtype);
        }
        return always ? a.attr("copy")() : a;
      },
      py::arg("dtype") = py::none(), py::arg("copy") = py::none());
  t.def("__dlpack__", &to_dlpack, py::kw_only(), py::arg("stream") = py::none(),
        py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none());
  t.def("__dlpack_device__", [](const Tensor& self) {
    const dl::Device d = dlpack_device(self.device());
    return py::make_tuple(d.device_type, d.device_id);
  });
  m.def("from_numpy", &from_numpy, py::arg("ndarray"), "A tensor sharing the numpy array's memory.");
  m.def("from_dlpack", &from_dlpack, py::arg("ext_tensor"),
        "A tensor sharing the memory of any object with __dlpack__, or of a DLPack capsule.");
}

}  // namespace loom::python
