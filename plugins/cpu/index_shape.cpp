// The index-and-shape family, as the CUDA plugin groups it: one registration
// function per file, called together here.
#include "indexing.hpp"
#include "kernels.hpp"

namespace loom::cpu {

void register_index_shape_kernels(plugin::Registrar& r) {
  register_indexing_kernels(r);       // indexing_kernels.cpp: gather, index_select, scatters, index_add_
  register_masked_kernels(r);         // indexing_masked.cpp: masked_fill_, nonzero, masked_select
  register_shape_kernels(r);          // shape_kernels.cpp: cat, flip, roll, tril/triu
  register_sort_kernels(r);           // sort.cpp: sort, topk
  register_pad_embedding_kernels(r);  // pad_kernels.cpp: pad, embedding
}

}  // namespace loom::cpu
