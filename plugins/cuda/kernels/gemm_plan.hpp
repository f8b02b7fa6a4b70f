// How a loom matrix product becomes cuBLAS calls: pure host arithmetic on
// shapes and strides, kept apart from cuBLAS so the host test
// (tests/row_ops_test.cu) can check it without a GPU.
//
// loom's matrices are row-major [M, K] x [K, N] -> [M, N] with arbitrary
// element strides; cuBLAS is column-major: C' = op(A') op(B') where each
// matrix is described by a leading dimension (the stride between columns).
// A row-major matrix with a unit column stride is, read column-major, its
// own transpose with ld = its row stride; one with a unit row stride is
// already column-major with ld = its column stride. C has no op in cuBLAS,
// so when C is row-major the whole product is transposed
// (C^T = B^T A^T) and the operands swap places.
#pragma once

#include "vendor/gpu_target.hpp"

#include <loom/plugin/strided.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE::gemm {

// A logical row-major matrix [rows, cols] with element strides.
struct Matrix {
  int64_t rows, cols;
  int64_t row_stride, col_stride;

  Matrix transposed() const { return {cols, rows, col_stride, row_stride}; }
};

// How cuBLAS reads one operand: op(X') = X with X' column-major, leading
// dimension `ld`, transposed when `transpose`.
struct Operand {
  bool transpose;
  int64_t ld;
};

// `x` as a cuBLAS operand, or nothing when neither of its strides is a unit
// one (or the other stride overlaps rows/columns, e.g. a broadcast): the
// caller then copies it to contiguous memory. A dim of size <= 1 never
// constrains its stride; cuBLAS still wants ld >= max(1, leading rows).
inline std::optional<Operand> as_operand(const Matrix& x) {
  if (x.row_stride == 1 || x.rows <= 1) {  // column-major [rows, cols]
    const int64_t ld = x.cols <= 1 ? std::max<int64_t>(1, x.rows) : x.col_stride;
    if (ld >= std::max<int64_t>(1, x.rows)) return Operand{false, ld};
  }
  if (x.col_stride == 1 || x.cols <= 1) {  // column-major [cols, rows], read transposed
    const int64_t ld = x.rows <= 1 ? std::max<int64_t>(1, x.cols) : x.row_stride;
    if (ld >= std::max<int64_t>(1, x.cols)) return Operand{true, ld};
  }
  return std::nullopt;
}

// One cuBLAS GEMM: C'[m, n] = op(first)[m, k] op(second)[k, n], all
// column-major. `swapped` means first is loom's B (and second its A): the
// product was transposed because C is row-major. a_ok / b_ok say whether
// loom's A / B can be read in place; c_ok whether C can be written in place
// (C needs a unit stride on one side, not transposed).
struct Plan {
  bool swapped = false;
  bool a_ok = false, b_ok = false, c_ok = false;
  int64_t m = 0, n = 0, k = 0;
  Operand first{false, 1}, second{false, 1};
  int64_t ldc = 1;
};

// Plans C[M, N] = A[M, K] B[K, N]. With K == 0 nothing of A or B is read,
// so their strides do not matter (cuBLAS then only scales C by beta).
inline Plan plan(const Matrix& a, const Matrix& b, const Matrix& c) {
  Plan p;
  p.k = a.cols;
  Matrix x = a, y = b, z = c;
  std::optional<Operand> out = as_operand(z);
  if (!out || out->transpose) {
    // Row-major C: C^T = B^T A^T is column-major in place.
    z = c.transposed();
    x = b.transposed();
    y = a.transposed();
    out = as_operand(z);
    p.swapped = true;
    if (!out || out->transpose) return p;  // c_ok stays false
  }
  p.c_ok = true;
  p.ldc = out->ld;
  p.m = z.rows;
  p.n = z.cols;
  if (p.k == 0) {
    p.first = {false, std::max<int64_t>(1, p.m)};
    p.second = {false, 1};
    p.a_ok = p.b_ok = true;
    return p;
  }
  const std::optional<Operand> fx = as_operand(x), fy = as_operand(y);
  if (fx) p.first = *fx;
  if (fy) p.second = *fy;
  (p.swapped ? p.b_ok : p.a_ok) = fx.has_value();
  (p.swapped ? p.a_ok : p.b_ok) = fy.has_value();
  return p;
}

// ---- batch dims ----------------------------------------------------------------------------

// The batch dims walked as plugin::StridedIter does for elementwise loops:
// size-1 dims dropped, neighbours that step evenly in all three operands
// merged, at least one dim left (size 1 when there is no batch, size 0
// when some batch dim is empty). Operands kA, kB, kC; strides in elements,
// 0 broadcasts. A strided-batched GEMM covers the innermost dim; the outer
// ones become a host loop of calls.
using Batches = plugin::StridedIter<3>;
inline constexpr int kA = 0, kB = 1, kC = 2;

// The leading `nbatch` dims of the operands (C's sizes c_shape; A's and B's
// equal there or 1, a size-1 dim being broadcast whatever its stride).
inline void simplify_batches(int32_t nbatch, const int64_t* c_shape, const int64_t* a_shape,
                             const int64_t* a_strides, const int64_t* b_shape, const int64_t* b_strides,
                             const int64_t* c_strides, Batches& out) {
  std::vector<int64_t> sa(static_cast<size_t>(nbatch)), sb(static_cast<size_t>(nbatch));
  for (int32_t d = 0; d < nbatch; ++d) {
    sa[d] = a_shape[d] == 1 ? 0 : a_strides[d];
    sb[d] = b_shape[d] == 1 ? 0 : b_strides[d];
  }
  const int64_t* strides[3] = {sa.data(), sb.data(), c_strides};
  out.init(nbatch, c_shape, strides);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::gemm
