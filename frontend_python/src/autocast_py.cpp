// autocast_py.cpp — the per-thread autocast state of loom/autocast.h, for
// loom.amp (the autocast context manager and GradScaler are Python).
#include "convert.h"
#include "ops_py.h"

#include <loom/autocast.h>

namespace loom::python {

void bind_autocast(py::module_& m) {
  m.def("_is_autocast_enabled", [](const std::string& t) { return autocast::is_enabled(t); }, py::arg("device_type"));
  m.def("_set_autocast_enabled", [](const std::string& t, bool on) { autocast::set_enabled(t, on); },
        py::arg("device_type"), py::arg("enabled"));
  m.def("_get_autocast_dtype", [](const std::string& t) { return dtype_object(autocast::dtype(t)); },
        py::arg("device_type"));
  m.def("_set_autocast_dtype", [](const std::string& t, py::handle d) { autocast::set_dtype(t, to_dtype(d)); },
        py::arg("device_type"), py::arg("dtype"));
  m.def("_autocast_policy", [](const std::string& op) {
    switch (autocast::policy(op)) {
      case autocast::Policy::LowerPrecision: return "lower_precision";
      case autocast::Policy::Float32: return "float32";
      case autocast::Policy::Promote: return "promote";
      case autocast::Policy::Refused: return "refused";
      case autocast::Policy::None: break;
    }
    return "none";
  }, py::arg("op"), "What autocast does to the op's inputs: lower_precision, float32, promote, refused or none.");
}

}  // namespace loom::python
