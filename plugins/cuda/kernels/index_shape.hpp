// The indexing and shape family's registrations, one per file; together
// they are register_index_shape_kernels (index_shape.cpp, device.hpp).
#pragma once

#include <loom/plugin.hpp>

namespace loom::cuda::indexing {

void register_indexing_kernels(plugin::Registrar& r);  // indexing.cu: gather, index_select, scatters
}  // namespace loom::cuda::indexing
