// The pad, embedding and dropout kernels: pad and embedding are registered
// by register_pad_embedding_kernels (pad_kernels.cpp), dropout by
// register_random_kernels (random.cpp).
#pragma once

#include <loom/plugin_api.h>

namespace loom::cpu {

// pad_kernels.cpp: constant, reflect and replicate in one pass over the output.
void pad(const LoomKernelCall& c);
// embedding_kernels.cpp: gathers rows of weight by int32/int64 indices.
void embedding(const LoomKernelCall& c);
// dropout_kernels.cpp: the uniform draw, the keep test and the scaling in one pass.
void dropout(const LoomKernelCall& c);

}  // namespace loom::cpu
