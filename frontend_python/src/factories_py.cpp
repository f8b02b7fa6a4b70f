// factories_py.cpp — loom.tensor, zeros, ones, full, empty, arange,
// linspace, eye, rand, randn, randint, randperm and the *_like forms, with
// PyTorch's keywords (dtype=, device=, requires_grad=, generator=).
#include "convert.h"
#include "ops_py.h"

#include <pybind11/stl.h>

namespace loom::python {
namespace {

struct Options {
  std::optional<DType> dtype;
  std::optional<Device> device;
  bool requires_grad = false;
  bool pin_memory = false;
  std::optional<Generator> generator;
};

// random: the factory draws random numbers, so generator= is accepted.
Options options_of(const py::kwargs& kwargs, const char* fn, bool random = false) {
  Options o;
  for (const auto& [k, v] : kwargs) {
    const std::string key = py::str(k);
    if (key == "dtype") o.dtype = to_optional_dtype(v);
    else if (key == "device") o.device = v.is_none() ? std::nullopt : std::optional<Device>(to_device(v));
    else if (key == "requires_grad") o.requires_grad = v.cast<bool>();
    else if (key == "pin_memory") o.pin_memory = v.cast<bool>();
    else if (random && key == "generator") o.generator = to_optional_generator(v, fn);
    else if (key != "layout" && key != "memory_format")
      throw py::type_error(std::string(fn) + "() got an unexpected keyword argument '" + key + "'");
  }
  return o;
}

Tensor finish(Tensor t, const Options& o) {
  if (o.pin_memory) t = t.pin_memory("cuda");  // torch's pin_memory=True: CPU tensors, for CUDA
  if (o.requires_grad) t.requires_grad_();
  return t;
}

// zeros(2, 3), zeros((2, 3)) and zeros([2, 3]) alike.
std::vector<int64_t> sizes_of(const py::args& args, const char* fn) {
  if (args.size() == 1 && PySequence_Check(args[0].ptr()) && !is_tensor(args[0]))
    return args[0].cast<std::vector<int64_t>>();
  std::vector<int64_t> out;
  for (py::handle a : args) {
    if (PyFloat_Check(a.ptr()) || !PyIndex_Check(a.ptr()))
      throw py::type_error(std::string(fn) + "(): size must be ints, but got " + type_name(a));
    out.push_back(a.cast<int64_t>());
  }
  return out;
}

template <Tensor (*F)(IntArrayRef, DType, Device)>
void sized_factory(py::module_& m, const char* name, DType fallback) {
  m.def(name, [name, fallback](const py::args& args, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, name);
    return finish(F(sizes_of(args, name), o.dtype.value_or(fallback), o.device.value_or(cpu_device())), o);
  });
}

// zeros_like(t, dtype=None, device=None, requires_grad=False).
template <Tensor (*F)(IntArrayRef, DType, Device)>
void like_factory(py::module_& m, const char* name) {
  m.def(name, [name](const Tensor& t, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, name);
    return finish(F(t.sizes(), o.dtype.value_or(t.dtype()), o.device.value_or(t.device())), o);
  });
}

// rand(2, 3, generator=g) and the rest of sized_factory's forms.
template <Tensor (*F)(IntArrayRef, DType, Device, const std::optional<Generator>&)>
void random_factory(py::module_& m, const char* name) {
  m.def(name, [name](const py::args& args, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, name, true);
    return finish(F(sizes_of(args, name), o.dtype.value_or(kDefaultFloat), o.device.value_or(cpu_device()),
                    o.generator),
                  o);
  });
}

template <Tensor (*F)(IntArrayRef, DType, Device, const std::optional<Generator>&)>
void random_like_factory(py::module_& m, const char* name) {
  m.def(name, [name](const Tensor& t, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, name, true);
    return finish(F(t.sizes(), o.dtype.value_or(t.dtype()), o.device.value_or(t.device()), o.generator), o);
  });
}

}  // namespace

void bind_factories(py::module_& m) {
  m.def("tensor", [](py::handle data, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, "tensor");
    return finish(tensor_from_data(data, o.dtype, o.device), o);
  });
  sized_factory<empty>(m, "empty", kDefaultFloat);
  sized_factory<zeros>(m, "zeros", kDefaultFloat);
  sized_factory<ones>(m, "ones", kDefaultFloat);
  random_factory<rand>(m, "rand");
  random_factory<randn>(m, "randn");
  like_factory<empty>(m, "empty_like");
  like_factory<zeros>(m, "zeros_like");
  like_factory<ones>(m, "ones_like");
  random_like_factory<rand>(m, "rand_like");
  random_like_factory<randn>(m, "randn_like");
  m.def("full", [](std::vector<int64_t> size, py::handle value, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, "full");
    return finish(full(size, to_scalar(value, "fill_value"), o.dtype, o.device.value_or(cpu_device())), o);
  });
  m.def("full_like", [](const Tensor& t, py::handle value, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, "full_like");
    return finish(full(t.sizes(), to_scalar(value, "fill_value"), o.dtype.value_or(t.dtype()),
                       o.device.value_or(t.device())), o);
  });
  m.def("arange", [](const py::args& args, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, "arange");
    if (args.empty() || args.size() > 3) throw py::type_error("arange() takes 1 to 3 positional arguments (end) or (start, end[, step])");
    const Device d = o.device.value_or(cpu_device());
    if (args.size() == 1) return finish(arange(to_scalar(args[0], "end"), o.dtype, d), o);
    const Scalar step = args.size() == 3 ? to_scalar(args[2], "step") : Scalar(int64_t{1});
    return finish(arange(to_scalar(args[0], "start"), to_scalar(args[1], "end"), step, o.dtype, d), o);
  });
  m.def("linspace", [](py::handle start, py::handle end, int64_t steps, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, "linspace");
    return finish(linspace(to_scalar(start, "start"), to_scalar(end, "end"), steps, o.dtype.value_or(kDefaultFloat),
                           o.device.value_or(cpu_device())), o);
  });
  m.def("eye", [](int64_t n, py::object m_, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, "eye");
    return finish(eye(n, m_.is_none() ? -1 : m_.cast<int64_t>(), o.dtype.value_or(kDefaultFloat),
                      o.device.value_or(cpu_device())), o);
  }, py::arg("n"), py::arg("m") = py::none());
  m.def("randint", [](const py::args& args, const py::kwargs& kwargs) {
    // randint(high, size) or randint(low, high, size), as PyTorch.
    const Options o = options_of(kwargs, "randint", true);
    if (args.size() != 2 && args.size() != 3) throw py::type_error("randint() expects (high, size) or (low, high, size)");
    const int64_t low = args.size() == 3 ? args[0].cast<int64_t>() : 0;
    const int64_t high = args[args.size() - 2].cast<int64_t>();
    return finish(randint(low, high, args[args.size() - 1].cast<std::vector<int64_t>>(),
                          o.dtype.value_or(DType::Int64), o.device.value_or(cpu_device()), o.generator),
                  o);
  });
  m.def("randperm", [](int64_t n, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, "randperm", true);
    return finish(randperm(n, o.dtype.value_or(DType::Int64), o.device.value_or(cpu_device()), o.generator), o);
  }, py::arg("n"));
  m.def("scalar_tensor", [](py::handle v, const py::kwargs& kwargs) {
    const Options o = options_of(kwargs, "scalar_tensor");
    Tensor t = full({}, to_scalar(v, "value"), o.dtype, o.device.value_or(cpu_device()));
    return finish(t, o);
  });
}

}  // namespace loom::python
