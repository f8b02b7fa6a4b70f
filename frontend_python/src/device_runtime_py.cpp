// device_runtime_py.cpp — streams, events, device properties, allocator
// statistics and device options (loom/stream.h, loom/device_info.h). The
// torch.cuda-shaped names on top of these are Python (loom/cuda.py).
#include "convert.h"
#include "ops_py.h"

#include <loom/device_info.h>
#include <loom/stream.h>

#include <pybind11/stl.h>

#include <sstream>

namespace loom::python {
namespace {

// torch.Event: an optional device up front, so record() without a stream
// knows where to record; enable_timing is accepted for torch's signature
// (loom's events always time).
struct PyEvent {
  Event event;
  std::optional<Device> device;
  bool enable_timing = false;

  Device where(const char* what) const {
    if (auto d = event.device()) return *d;
    if (device) return *device;
    throw py::value_error(std::string("Event.") + what +
                          ": the event has no device yet; pass a stream, or create it with "
                          "loom.Event(device=...)");
  }
};

std::string stream_repr(const Stream& s) {
  std::ostringstream os;
  os << "<loom.Stream device=" << s.device().str() << " handle=" << s.native_handle() << ">";
  return os.str();
}

py::dict stats_dict(const MemoryStats& s) {
  py::dict d;
  d["allocated_bytes"] = s.allocated_bytes;
  d["max_allocated_bytes"] = s.max_allocated_bytes;
  d["reserved_bytes"] = s.reserved_bytes;
  d["max_reserved_bytes"] = s.max_reserved_bytes;
  d["num_allocs"] = s.num_allocs;
  d["num_cache_hits"] = s.num_cache_hits;
  d["num_device_allocs"] = s.num_device_allocs;
  d["num_ooms"] = s.num_ooms;
  return d;
}

void bind_streams(py::module_& m) {
  using release_gil = py::call_guard<py::gil_scoped_release>;
  auto stream_class = py::class_<Stream>(m, "Stream", "An ordered queue of work on one device (torch.cuda.Stream)");
  stream_class
      .def(py::init([](py::handle device) { return Stream(to_device(device)); }), py::arg("device"))
      .def_property_readonly("device", &Stream::device)
      .def_property_readonly("native_handle",
                             [](const Stream& s) { return reinterpret_cast<uintptr_t>(s.native_handle()); })
      .def_property_readonly("is_default", &Stream::is_default)
      .def("synchronize", &Stream::synchronize, release_gil())
      .def("query", &Stream::query, "True when all work queued on the stream is done (never blocks)")
      .def("wait_stream", &Stream::wait_stream, py::arg("stream"),
           "Later work on this stream waits for the work queued on `stream` so far (the host does not wait)")
      .def("__eq__", [](const Stream& a, py::handle b) {
        return py::isinstance<Stream>(b) && b.cast<const Stream&>() == a;
      })
      .def("__hash__", [](const Stream& s) {
        return std::hash<void*>()(s.native_handle()) ^ static_cast<size_t>(s.device().type * 1024 + s.device().index);
      })
      .def("__repr__", &stream_repr);
  m.def("default_stream", [](py::handle d) { return Stream::default_stream(to_device(d)); }, py::arg("device"));
  m.def("current_stream", [](py::handle d) { return current_stream(to_device(d)); }, py::arg("device"));
  m.def("set_stream", &set_current_stream, py::arg("stream"),
        "Makes `stream` this thread's current stream on its device (torch.cuda.set_stream)");
  m.def("synchronize", [](py::handle d) {
    const Device device = to_device(d);
    py::gil_scoped_release release;
    synchronize(device);
  }, py::arg("device"), "Waits for all work queued on the device");

  py::class_<PyEvent>(m, "Event", "A marker in a stream, for waiting and timing (torch.Event)")
      .def(py::init([](py::object device, bool enable_timing) {
             PyEvent e;
             if (!device.is_none()) e.device = to_device(device);
             e.enable_timing = enable_timing;
             return e;
           }),
           py::arg("device") = py::none(), py::arg("enable_timing") = false)
      .def("record", [](PyEvent& e, std::optional<Stream> stream) {
        e.event.record(stream ? *stream : current_stream(e.where("record()")));
      }, py::arg("stream") = py::none(), "Marks the end of `stream` (default: the current stream)")
      .def("synchronize", [](const PyEvent& e) { e.event.synchronize(); }, release_gil())
      .def("query", [](const PyEvent& e) { return e.event.query(); },
           "True when the work before the latest record is done (never blocks)")
      .def("wait", [](const PyEvent& e, std::optional<Stream> stream) {
        if (stream) e.event.wait(*stream);
        else if (auto d = e.event.device()) e.event.wait(current_stream(*d));
      }, py::arg("stream") = py::none(),
      "Later work on `stream` (default: the current stream of the event's device) waits for this event")
      .def("elapsed_time", [](const PyEvent& e, const PyEvent& end) { return e.event.elapsed_ms(end.event); },
           py::arg("end_event"), "Milliseconds from this event to `end_event`")
      .def_property_readonly("is_recorded", [](const PyEvent& e) { return e.event.is_recorded(); })
      .def_property_readonly("enable_timing", [](const PyEvent& e) { return e.enable_timing; })
      .def_property_readonly("device", [](const PyEvent& e) -> std::optional<Device> {
        if (auto d = e.event.device()) return d;
        return e.device;
      });
  // Bound after Event, whose class it takes.
  stream_class.def("wait_event", [](const Stream& s, const PyEvent& e) { s.wait_event(e.event); }, py::arg("event"),
                   "Later work on this stream waits for `event`'s latest record (the host does not wait)");
}

void bind_device_info(py::module_& m) {
  py::class_<DeviceProperties>(m, "DeviceProperties", "What device_properties() reports")
      .def_readonly("name", &DeviceProperties::name)
      .def_readonly("total_memory", &DeviceProperties::total_memory)
      .def_readonly("major", &DeviceProperties::major)
      .def_readonly("minor", &DeviceProperties::minor)
      .def_readonly("multi_processor_count", &DeviceProperties::multi_processor_count)
      .def("__repr__", [](const DeviceProperties& p) {
        std::ostringstream os;
        os << "DeviceProperties(name='" << p.name << "', major=" << p.major << ", minor=" << p.minor
           << ", total_memory=" << (p.total_memory >> 20) << "MB, multi_processor_count="
           << p.multi_processor_count << ")";
        return os.str();
      });
  m.def("device_properties", [](py::handle d) { return device_properties(to_device(d)); }, py::arg("device"));
  m.def("memory_stats", [](py::handle d) { return stats_dict(memory_stats(to_device(d))); }, py::arg("device"),
        "The device allocator's statistics as a dict (bytes and counts)");
  m.def("empty_cache", [](py::handle d) { empty_cache(to_device(d)); }, py::arg("device"));
  m.def("reset_peak_memory_stats", [](py::handle d) { reset_peak_memory_stats(to_device(d)); },
        py::arg("device"));
  m.def("set_device_option", [](const std::string& type, const std::string& key, const std::string& value) {
    set_device_option(type, key, value);
  }, py::arg("device_type"), py::arg("key"), py::arg("value"));
  m.def("set_num_threads", [](int n) { set_num_threads(n); }, py::arg("n"),
        "Threads the CPU kernels (and every device offering the setting) may use.");
  m.def("get_num_threads", [] { return get_num_threads(); });
  m.def("_available_device_count", [](const std::string& type) { return available_device_count(type); },
        py::arg("device_type"), "Devices of a type, loading its plugin; 0 when there is none");
}

}  // namespace

void bind_device_runtime(py::module_& m) {
  bind_streams(m);
  bind_device_info(m);
}

}  // namespace loom::python
