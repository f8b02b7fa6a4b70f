// ops_py.h — the schema-driven op binding (ops_py.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace loom::python {
namespace py = pybind11;

// Runs op `name` (any overload whose schema the arguments fit) and returns
// its result(s); TypeError listing every signature when none fits.
py::object dispatch_op(const std::string& name, const py::tuple& args, const py::dict& kwargs);

void bind_ops(py::module_& m);
void bind_tensor(py::module_& m);
void bind_factories(py::module_& m);
void bind_autograd(py::module_& m);
void bind_indexing(py::module_& m);  // Tensor.__getitem__ / __setitem__
void bind_interop(py::module_& m);   // numpy and DLPack
void bind_plugins(py::module_& m);
void bind_distributed(py::module_& m);  // loom.distributed: process groups and collectives
void bind_jit(py::module_& m);      // loom.jit: trace, Graph, parse_graph   // plugins(), load_plugin, fallback_stats, library
void bind_autocast(py::module_& m);  // the autocast state (loom.amp)
void bind_random(py::module_& m);  // Generator, manual_seed, seed, initial_seed
void bind_device_runtime(py::module_& m);  // streams, events, device properties, memory stats
void bind_nn(py::module_& m);              // _interpolate
void bind_profiler(py::module_& m);        // _Profile, _RecordFunction (loom.profiler)
}  // namespace loom::python
