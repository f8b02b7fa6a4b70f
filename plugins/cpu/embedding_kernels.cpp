// embedding (docs/kernel_conventions.md, "Loss, dropout, embedding, pad"):
// out[j, :] = weight[indices[j], :] for every index j in row-major order.
// The indices are checked in one serial pass first (they are few next to
// the rows they select, and parallel_for bodies must not throw); the row
// copies then run in parallel. Rows are copied as raw elements of the
// dtype's width, so every dtype takes the same path.
#include "common.hpp"
#include "nn_misc_kernels.hpp"

#include <loom/plugin/strided.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

namespace loom::cpu {
namespace {

// The indices in row-major order as int64, validated against [0, rows).
template <class I>
void read_indices(const LoomTensorDesc& idx, int64_t rows, std::vector<int64_t>& out) {
  const I* p = plugin::data_ptr<const I>(idx);
  const int64_t* strides[1] = {idx.strides};
  plugin::StridedIter<1> it;
  it.init(idx.ndim, idx.shape, strides);
  const int64_t s = it.inner_stride(0);
  it.for_each_run(0, it.numel, [&](const int64_t* off, int64_t len) {
    for (int64_t k = 0; k < len; ++k) {
      const int64_t v = static_cast<int64_t>(p[off[0] + k * s]);
      if (v < 0 || v >= rows) [[unlikely]]
        fail(LOOM_STATUS_INVALID_ARGUMENT,
             "embedding: index %lld is out of range for num_embeddings %lld (expected an index "
             "in [0, %lld))",
             static_cast<long long>(v), static_cast<long long>(rows), static_cast<long long>(rows));
      out.push_back(v);
    }
  });
}

// Copies rows with elements of type U (an unsigned integer of the dtype's
// width: a copy needs no arithmetic).
template <class U>
void gather_rows(const LoomTensorDesc& w, const LoomTensorDesc& out,
                 const std::vector<int64_t>& rows) {
  const U* pw = plugin::data_ptr<const U>(w);
  U* po = plugin::data_ptr<U>(out);
  const int64_t D = w.shape[1], ws0 = w.strides[0], ws1 = w.strides[1];
  const int64_t os1 = out.strides[out.ndim - 1];
  const int64_t n = static_cast<int64_t>(rows.size());
  // Output rows are contiguous row-major positions: j * D when the core
  // allocated it; any strides are handled through the leading dims' walk.
  std::vector<int64_t> row_off(static_cast<size_t>(n));
  {
    int64_t j = 0;
    const int64_t* strides[1] = {out.strides};
    plugin::StridedIter<1> it;
    it.init(out.ndim - 1, out.shape, strides);
    const int64_t s = it.inner_stride(0);
    it.for_each_run(0, it.numel, [&](const int64_t* off, int64_t len) {
      for (int64_t k = 0; k < len; ++k) row_off[static_cast<size_t>(j++)] = off[0] + k * s;
    });
  }
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(D, 1));
  parallel_for(n, grain, [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) {
      const U* src = pw + rows[static_cast<size_t>(j)] * ws0;
      U* dst = po + row_off[static_cast<size_t>(j)];
      if (ws1 == 1 && os1 == 1) {
        std::memcpy(dst, src, static_cast<size_t>(D) * sizeof(U));
      } else {
        for (int64_t k = 0; k < D; ++k) dst[k * os1] = src[k * ws1];
      }
    }
  });
}

}  // namespace

void embedding(const LoomKernelCall& c) {
  expect_arity(c, "embedding", 2, 1);
  const LoomTensorDesc& w = c.inputs[0];
  const LoomTensorDesc& idx = c.inputs[1];
  const LoomTensorDesc& out = c.outputs[0];
  bool ok = w.ndim == 2 && out.ndim == idx.ndim + 1 && out.dtype == w.dtype &&
            out.shape[out.ndim - 1] == w.shape[1];
  for (int32_t d = 0; ok && d < idx.ndim; ++d) ok = out.shape[d] == idx.shape[d];
  if (!ok)
    fail(LOOM_STATUS_INVALID_ARGUMENT,
         "cpu embedding: expected a 2-D weight and an output of shape indices.shape + "
         "[embedding_dim] in weight's dtype");
  std::vector<int64_t> rows;
  rows.reserve(static_cast<size_t>(plugin::numel(idx)));
  if (idx.dtype == LOOM_DTYPE_INT64) read_indices<int64_t>(idx, w.shape[0], rows);
  else if (idx.dtype == LOOM_DTYPE_INT32) read_indices<int32_t>(idx, w.shape[0], rows);
  else
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu embedding: indices must be int64 or int32, got %s",
         plugin::dtype_name(idx.dtype));
  if (rows.empty() || w.shape[1] == 0) return;
  switch (plugin::dtype_itemsize(w.dtype)) {
    case 1: return gather_rows<uint8_t>(w, out, rows);
    case 2: return gather_rows<uint16_t>(w, out, rows);
    case 4: return gather_rows<uint32_t>(w, out, rows);
    case 8: return gather_rows<uint64_t>(w, out, rows);
    default: fail_dtype("embedding", w.dtype);
  }
}

}  // namespace loom::cpu
