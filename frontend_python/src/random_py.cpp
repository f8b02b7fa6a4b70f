// random_py.cpp — loom.Generator and the seeding functions (torch.Generator,
// torch.manual_seed / seed / initial_seed / get_rng_state / set_rng_state),
// over loom/generator.h. The per-device forms (loom.cuda.manual_seed ...)
// are written in Python over _default_generator.
#include "convert.h"
#include "ops_py.h"

namespace loom::python {
namespace {

// A seed as PyTorch reads one: any int in [-2^63, 2^64), negative ones
// taken modulo 2^64.
uint64_t seed_of(py::handle h) {
  if (!PyIndex_Check(h.ptr()) || PyBool_Check(h.ptr()))
    throw py::type_error("seed must be an int, not " + type_name(h));
  const py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(h.ptr()));
  if (i < py::int_(0)) {
    const long long v = PyLong_AsLongLong(i.ptr());
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw std::runtime_error("Overflow when unpacking long: a seed must lie in [-2**63, 2**64)");
    }
    return static_cast<uint64_t>(v);
  }
  const unsigned long long v = PyLong_AsUnsignedLongLong(i.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw std::runtime_error("Overflow when unpacking long: a seed must lie in [-2**63, 2**64)");
  }
  return v;
}

}  // namespace

std::optional<Generator> to_optional_generator(py::handle h, const char* fn) {
  if (h.is_none()) return std::nullopt;
  if (!py::isinstance<Generator>(h))
    throw py::type_error(std::string(fn) + "(): argument 'generator' must be a loom.Generator, not " + type_name(h));
  return h.cast<Generator>();
}

void bind_random(py::module_& m) {
  py::class_<Generator>(m, "Generator", "A stream of random numbers for one device type (torch.Generator)")
      .def(py::init([](py::handle device) { return Generator(device.is_none() ? cpu_device() : to_device(device)); }),
           py::arg("device") = py::none())
      .def_property_readonly("device", &Generator::device)
      .def("manual_seed", [](Generator& g, py::handle seed) { return g.manual_seed(seed_of(seed)); },
           py::arg("seed"), "Restarts the stream at `seed`; returns the generator.")
      .def("seed", &Generator::seed, "Reseeds with a non-deterministic seed and returns it.")
      .def("initial_seed", &Generator::initial_seed)
      .def("get_state", &Generator::get_state, "The state: a uint8 tensor of 16 bytes (seed, offset).")
      .def("set_state", [](Generator& g, const Tensor& state) { g.set_state(state); return g; },
           py::arg("new_state"))
      .def("__eq__", [](const Generator& a, const Generator& b) { return a == b; })
      .def("__hash__", [](const Generator& g) { return std::hash<const void*>{}(g.impl()); })
      .def("__repr__", [](const Generator& g) { return "<loom.Generator object on " + g.device().str() + ">"; });

  m.def("_default_generator", [](py::handle device) { return default_generator(to_device(device)); },
        py::arg("device"), "The default generator of a device (torch.cuda.default_generators[i]).");
  m.def("manual_seed", [](py::handle seed) {
    manual_seed(seed_of(seed));
    return default_generator(cpu_device());
  }, py::arg("seed"), "Seeds the default generator of every device; returns the CPU's.");
  m.def("seed", [] { return seed(); }, "Seeds every default generator non-deterministically; returns the seed.");
  m.def("initial_seed", [] { return initial_seed(); }, "The seed of the CPU's default generator.");
}

}  // namespace loom::python
