// profiler_py.cpp — loom::profiler::Profile for loom.profiler (the
// torch.profiler-shaped names are Python: loom/profiler.py).
#include "convert.h"
#include "ops_py.h"

#include <loom/profiler.h>

#include <pybind11/stl.h>

namespace loom::python {

namespace {
profiler::Profile::SortBy sort_key(const std::string& s) {
  using S = profiler::Profile::SortBy;
  if (s.empty()) return S::Default;
  if (s == "cpu_time_total" || s == "host_time_total") return S::HostTotal;
  if (s == "self_cpu_time_total" || s == "self_host_time_total") return S::HostSelf;
  if (s == "cuda_time_total" || s == "device_time_total") return S::Device;
  if (s == "count") return S::Calls;
  throw py::value_error("sort_by: expected one of cpu_time_total, self_cpu_time_total, cuda_time_total, "
                        "device_time_total, count; got '" + s + "'");
}
}  // namespace

void bind_profiler(py::module_& m) {
  using profiler::Profile;
  py::class_<Profile>(m, "_Profile")
      .def(py::init<>())
      .def("stop", &Profile::stop)
      .def_property_readonly("recording", &Profile::recording)
      // (name, device, depth, start_us, end_us, device_ms or None) per call.
      .def("events", [](const Profile& p) {
        py::list out;
        for (const auto& e : p.events())
          out.append(py::make_tuple(e.name, e.device.str(), e.depth, e.start_ns / 1e3, e.end_ns / 1e3,
                                    e.device_ms < 0 ? py::object(py::none()) : py::float_(e.device_ms)));
        return out;
      })
      // (name, calls, host_total_ms, host_self_ms, device_ms or None) per op.
      .def("key_averages", [](const Profile& p, const std::string& sort_by) {
        py::list out;
        for (const auto& s : p.key_averages(sort_key(sort_by)))
          out.append(py::make_tuple(s.name, s.calls, s.host_total_ms, s.host_self_ms,
                                    s.device_ms < 0 ? py::object(py::none()) : py::float_(s.device_ms)));
        return out;
      }, py::arg("sort_by") = "")
      .def("table", [](const Profile& p, size_t row_limit, const std::string& sort_by) {
        return p.table(row_limit, sort_key(sort_by));
      }, py::arg("row_limit") = 0, py::arg("sort_by") = "");
  // loom.profiler.record_function's range: begun by enter(), ended by exit().
  struct Range {
    std::string name;
    std::unique_ptr<profiler::RecordFunction> open;
  };
  py::class_<Range>(m, "_RecordFunction")
      .def(py::init([](std::string name) { return Range{std::move(name), nullptr}; }))
      .def("enter", [](Range& r) { r.open = std::make_unique<profiler::RecordFunction>(r.name); })
      .def("exit", [](Range& r) { r.open.reset(); });
}

}  // namespace loom::python
