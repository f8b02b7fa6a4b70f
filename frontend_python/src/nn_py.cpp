// nn_py.cpp — the C++ functions behind torch.nn.functional that are not
// catalog ops (loom::interpolate, and loom::nn::functional's one_hot,
// normalize, cosine_similarity and channel dropout), so Python and C++
// check and compute the same way.
#include "convert.h"
#include "ops_py.h"

#include <loom/nn/functional.h>
#include <loom/ops.h>

#include <pybind11/stl.h>

namespace loom::python {

void bind_nn(py::module_& m) {
  m.def("_interpolate", &loom::interpolate, py::arg("input"), py::arg("size") = py::none(),
        py::arg("scale_factor") = py::none(), py::arg("mode") = "nearest", py::arg("align_corners") = py::none(),
        py::arg("recompute_scale_factor") = py::none(),
        "torch.nn.functional.interpolate over the upsample op; size and scale_factor are lists.");
  namespace F = loom::nn::functional;
  m.def("_one_hot", &F::one_hot, py::arg("tensor"), py::arg("num_classes") = -1);
  m.def(
      "_normalize",
      [](const Tensor& input, double p, int64_t dim, double eps) {
        return F::normalize(input, F::NormalizeFuncOptions().p(p).dim(dim).eps(eps));
      },
      py::arg("input"), py::arg("p"), py::arg("dim"), py::arg("eps"));
  m.def(
      "_cosine_similarity",
      [](const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
        return F::cosine_similarity(x1, x2, F::CosineSimilarityFuncOptions().dim(dim).eps(eps));
      },
      py::arg("x1"), py::arg("x2"), py::arg("dim"), py::arg("eps"));
  m.def(
      "_feature_dropout",
      [](const Tensor& input, double p, bool training, bool inplace, int64_t batched_dims, const std::string& fn) {
        return F::feature_dropout(input, p, training, inplace, batched_dims, fn.c_str());
      },
      py::arg("input"), py::arg("p"), py::arg("training"), py::arg("inplace"), py::arg("batched_dims"),
      py::arg("fn"));
}

}  // namespace loom::python
