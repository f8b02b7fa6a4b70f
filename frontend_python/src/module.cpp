// module.cpp — loom._C: the compiled half of the Python package.
#include "convert.h"
#include "ops_py.h"


namespace loom::python {
namespace {

// loom::Error reaches Python as the exception class of its kind, with the
// same message and a `status` attribute (errors.h).
void translate_errors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error&) {
      set_python_error();
    }
  });
}

}  // namespace
}  // namespace loom::python

PYBIND11_MODULE(_C, m) {
  using namespace loom::python;
  m.doc() = "loom's compiled core: tensors, the op catalog, autograd (see the loom package)";
  loom::init();
  translate_errors();
  m.attr("OutOfMemoryError") = py::handle(out_of_memory_error());
  m.attr("DeviceError") = py::handle(device_error());
  m.attr("UnsupportedError") = py::handle(unsupported_error());
  m.attr("__version__") = LOOM_VERSION;
  bind_tensor(m);
  bind_random(m);
  bind_autocast(m);
  bind_factories(m);
  bind_ops(m);
  bind_autograd(m);
  bind_indexing(m);
  bind_interop(m);
  bind_plugins(m);
  bind_device_runtime(m);
  bind_nn(m);
  bind_profiler(m);
  bind_jit(m);
  bind_distributed(m);
}
