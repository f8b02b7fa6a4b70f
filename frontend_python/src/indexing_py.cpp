// indexing_py.cpp — see ops_py.h.
#include "convert.h"
#include "ops_py.h"

namespace loom::python {
void bind_indexing(py::module_& m) {}
}  // namespace loom::python
