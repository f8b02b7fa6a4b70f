// The indexing and shape family (docs/kernel_conventions.md, "Indexing" and
// "Shape"): each file registers its own ops.
#include "../device.hpp"
#include "index_shape.hpp"
#include "vendor/gpu_target.hpp"

namespace loom::LOOM_GPU_NAMESPACE {

void register_index_shape_kernels(plugin::Registrar& r) {
  indexing::register_indexing_kernels(r);
  indexing::register_masked_kernels(r);
  indexing::register_shape_kernels(r);
  indexing::register_sort_kernels(r);
  indexing::register_pad_embedding_kernels(r);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
