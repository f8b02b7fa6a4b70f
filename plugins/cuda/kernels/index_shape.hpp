// Host pieces the indexing and shape family's files share (indexing.cu,
// indexing_masked.cu, shape.cu, pad_embedding.cu), and their registrations,
// one per file; together they are register_index_shape_kernels
// (index_shape.cpp, device.hpp).
#pragma once

#include "../cuda_error.hpp"
#include "../runtime.hpp"

#include <loom/plugin.hpp>

#include "vendor/gpu_runtime.hpp"

#include <cstdint>
#include <string>

namespace loom::LOOM_GPU_NAMESPACE::indexing {

[[noreturn]] inline void fail_op(const char* op, const std::string& what) {
  throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": " + what);
}

// Calls f(W{}) with an unsigned word of `dtype`'s width: kernels that only
// move elements are instantiated per width, not per dtype.
template <class F>
void visit_width(int32_t dtype, const char* op, F&& f) {
  switch (plugin::dtype_itemsize(dtype)) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: break;
  }
  fail_op(op, std::string("unsupported dtype ") + plugin::dtype_name(dtype));
}

// Calls f(I{}) with the index dtype's type (int64 or int32, as the CPU).
template <class F>
void visit_index(int32_t dtype, const char* op, F&& f) {
  if (dtype == LOOM_DTYPE_INT64) return f(int64_t{});
  if (dtype == LOOM_DTYPE_INT32) return f(int32_t{});
  fail_op(op, std::string("index must be int64 or int32, got ") + plugin::dtype_name(dtype));
}

// Throws when the last launch on this thread failed.
inline void check_launch(int device, const char* op) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) [[unlikely]]
    throw_cuda(e, device, std::string(op) + " kernel launch");
}

void register_indexing_kernels(plugin::Registrar& r);  // indexing.cu: gather, index_select, scatters
void register_masked_kernels(plugin::Registrar& r);    // indexing_masked.cu: masked_fill_, nonzero, masked_select
void register_shape_kernels(plugin::Registrar& r);     // shape.cu: cat, flip, roll, tril/triu
void register_sort_kernels(plugin::Registrar& r);      // sort.cu: sort, topk
void register_pad_embedding_kernels(plugin::Registrar& r);  // pad_embedding.cu: pad, embedding
}  // namespace loom::LOOM_GPU_NAMESPACE::indexing
