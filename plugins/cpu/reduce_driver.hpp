// The one loop engine behind every reduction kernel (sum, mean, prod, amax,
// max.dim, argmax, var, norm, logsumexp, all, ... — docs/kernel_conventions.md,
// "Reductions"). A kernel checks its call with `prepare`, which also plans
// it, builds an op functor and hands both to `reduce::run`.
//
// An op functor (see reduce_ops.hpp) is
//   using In;  using Acc;  static constexpr bool kHasIdentity;
//   Acc  init() const;                                   // the identity
//   void add(Acc&, In x, int64_t i) const;               // one element
//   void run(Acc&, const In* p, int64_t n, int64_t i) const;  // n contiguous
//   void add_row(Acc* a, const In* row, int64_t nc, int64_t stride,
//                int64_t i) const;                       // a[j] += row[j*stride]
//   optional: void add_rows4(Acc* a, const In* const* rows, int64_t nc,
//                int64_t stride, int64_t i) const;       // rows i..i+3 at once:
//                fewer accumulator round trips, four read streams
//   optional: void run_short(Acc&, const In* p, int64_t n) const;
//                n < kMinVectorRun contiguous elements, when a loop of add()
//                would be slow (logsumexp)
//     or, instead of add_row/add_rows4, for ops that want two passes over a
//     chunk of rows (var, logsumexp):
//   template <class Rows> void fold_chunk(Acc* a, int64_t nc, int64_t stride,
//                int64_t nrows, const Rows& rows) const; // rows(f) calls
//                f(row, i) for each row in order; a[] arrives as init()
//   void combine(Acc& a, const Acc& later) const;        // merge partials
//   void store(const Acc&, int64_t count, int64_t o0, int64_t o1) const;
// where i is the row-major index of the element (row) within its reduced
// slice (the arg ops need it), count the slice's element count and o0/o1
// the element offsets of the output(s). combine(init(), x) must be x.
//
// Plan: size-1 dims are dropped, dims are ordered by input stride (largest
// first, stride 0 outermost) so the innermost loop walks memory, and
// neighbours of the same kind merge. Then one of two layouts:
//   * inner: the innermost dim is reduced. Each output folds its slice with
//     op.run over contiguous runs (vectorised horizontal reduction) or
//     op.add over strided ones.
//   * outer: the innermost dim is kept. Up to kColumnsFor<Acc> accumulators
//     per work item take one input row at a time (op.add_row: one vector op
//     per row, across columns).
// Determinism: a slice is always cut into the same fixed pieces (kChunk
// elements, or chunk_rows rows), each folded from init() and combined in
// order, whether the pieces run on one thread or many. So results depend
// on shape and strides, never on the thread count.
#pragma once

#include "common.hpp"
#include "loops.hpp"  // LOOM_CPU_CLONES

#include <loom/plugin/strided.hpp>

#include <algorithm>
#include <memory>

namespace loom::cpu::reduce {

inline constexpr int64_t kChunk = 65536;  // elements per partial (a multiple of every block)

// Columns per outer-layout work item: 16 KiB of accumulators, so they stay
// in L1 while each input row is read in long contiguous segments (short
// ones, each in another page, starve the prefetcher).
template <class Acc>
inline constexpr int64_t kColumnsFor = std::clamp<int64_t>(16384 / sizeof(Acc), 64, 4096);

struct Plan {
  plugin::StridedIter<3> kept;  // kept dims; operands {input, output 0, output 1}
  plugin::StridedIter<1> red;   // reduced dims; operand {input}
  int64_t numel_out = 0, numel_red = 0;
  bool inner_reduced = false;   // the innermost (smallest input stride) dim is reduced
};

// Checks a reduction call — one input, `num_outputs` outputs of dtypes
// out_dtypes[] in keepdim form, values[0] the reduced dims (INT_LIST; NONE
// or empty means every dim), at least `num_values` values — and plans it.
// Throws INVALID_ARGUMENT naming `op` on a malformed call.
void prepare(const LoomKernelCall& c, const char* op, int32_t num_values,
             const int32_t* out_dtypes, int32_t num_outputs, Plan& plan);

// ------------------------------------------------------------- helpers ---

// a[j] = f(a[j], row[j * stride]) for j < nc; the unit-stride loop is the
// one that vectorises across columns.
template <class Acc, class T, class F>
[[gnu::flatten]] LOOM_CPU_CLONES void fold_columns(Acc* a, const T* row, int64_t nc,
                                                   int64_t stride, F f) {
  if (stride == 1) {
    for (int64_t j = 0; j < nc; ++j) f(a[j], row[j]);
  } else {
    for (int64_t j = 0; j < nc; ++j) f(a[j], row[j * stride]);
  }
}

// a[j] = f(a[j], r[0][j * s], r[1][j * s], r[2][j * s], r[3][j * s]).
template <class Acc, class T, class F>
[[gnu::flatten]] LOOM_CPU_CLONES void fold_columns4(Acc* a, const T* const* r, int64_t nc,
                                                    int64_t stride, F f) {
  const T *r0 = r[0], *r1 = r[1], *r2 = r[2], *r3 = r[3];
  if (stride == 1) {
    for (int64_t j = 0; j < nc; ++j) f(a[j], r0[j], r1[j], r2[j], r3[j]);
  } else {
    for (int64_t j = 0; j < nc; ++j) {
      const int64_t k = j * stride;
      f(a[j], r0[k], r1[k], r2[k], r3[k]);
    }
  }
}

// ------------------------------------------------------------- driver ---

namespace detail {

// Below this many elements a contiguous run is folded by op.add too: the
// vector code's setup and lane tree would cost more than the run (many
// tiny slices, e.g. [N, 4] reduced over dim 1).
inline constexpr int64_t kMinVectorRun = 32;

template <class Op>
inline void span(const Op& op, typename Op::Acc& acc, const typename Op::In* p, int64_t n,
                 int64_t stride, int64_t idx) {
  if (stride == 1 && n >= kMinVectorRun) {
    op.run(acc, p, n, idx);
  } else {
    for (int64_t i = 0; i < n; ++i) op.add(acc, p[i * stride], idx + i);
  }
}

// Folds reduced indices [b, e) of the slice starting at p, from init().
template <class Op>
typename Op::Acc fold_range(const Op& op, const Plan& plan, const typename Op::In* p, int64_t b,
                            int64_t e) {
  typename Op::Acc acc = op.init();
  const int64_t rs = plan.red.inner_stride(0);
  if (plan.red.ndim == 1) {  // the common case: no odometer
    span(op, acc, p + b * rs, e - b, rs, b);
    return acc;
  }
  int64_t idx = b;
  plan.red.for_each_run(b, e, [&](const int64_t* off, int64_t len) {
    span(op, acc, p + off[0], len, rs, idx);
    idx += len;
  });
  return acc;
}

// A whole slice: fixed kChunk pieces combined in order.
template <class Op>
typename Op::Acc fold_slice(const Op& op, const Plan& plan, const typename Op::In* p) {
  const int64_t n = plan.numel_red;
  typename Op::Acc acc = fold_range(op, plan, p, 0, std::min(n, kChunk));
  for (int64_t b = kChunk; b < n; b += kChunk)
    op.combine(acc, fold_range(op, plan, p, b, std::min(n, b + kChunk)));
  return acc;
}

// `rows` slices of n < kMinVectorRun contiguous elements, `si` apart, with
// their outputs at o0 + i * s0 (and o1 + i * s1): one tight loop instead of
// a call chain per output.
template <class Op>
[[gnu::flatten]] LOOM_CPU_CLONES void fold_short_rows(const Op& op, const typename Op::In* p,
                                                      int64_t si, int64_t n, int64_t rows,
                                                      int64_t o0, int64_t s0, int64_t o1,
                                                      int64_t s1) {
  for (int64_t i = 0; i < rows; ++i) {
    typename Op::Acc a = op.init();
    const typename Op::In* q = p + i * si;
    if constexpr (requires { op.run_short(a, q, n); }) {
      op.run_short(a, q, n);
    } else {
      for (int64_t k = 0; k < n; ++k) op.add(a, q[k], k);
    }
    op.store(a, n, o0 + i * s0, o1 + i * s1);
  }
}

// Offsets {input, out0, out1} of kept linear index i.
inline void kept_offsets(const Plan& plan, int64_t i, int64_t* off3) {
  plan.kept.for_each_run(i, i + 1, [&](const int64_t* off, int64_t) {
    for (int k = 0; k < 3; ++k) off3[k] = off[k];
  });
}

template <class Op>
void inner(const Op& op, const Plan& plan, const typename Op::In* pin) {
  using Acc = typename Op::Acc;
  const int64_t nout = plan.numel_out, nred = plan.numel_red;
  const int64_t nchunks = (nred + kChunk - 1) / kChunk;
  if (nchunks > 1 && nout < max_threads() && !omp_in_parallel()) {
    // Few long slices: their chunks run in parallel, then combine in order.
    std::unique_ptr<Acc[]> part(new Acc[static_cast<size_t>(nout * nchunks)]);  // not vector: Acc may be bool
    parallel_for(nout * nchunks, 1, [&](int64_t s, int64_t e) {
      for (int64_t w = s; w < e; ++w) {
        int64_t off[3];
        kept_offsets(plan, w / nchunks, off);
        const int64_t b = (w % nchunks) * kChunk;
        part[w] =
            fold_range(op, plan, pin + off[0], b, std::min(nred, b + kChunk));
      }
    });
    for (int64_t o = 0; o < nout; ++o) {
      Acc acc = part[o * nchunks];
      for (int64_t c = 1; c < nchunks; ++c) op.combine(acc, part[o * nchunks + c]);
      int64_t off[3];
      kept_offsets(plan, o, off);
      op.store(acc, nred, off[1], off[2]);
    }
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / nred);
  const int64_t si = plan.kept.inner_stride(0), s0 = plan.kept.inner_stride(1),
                s1 = plan.kept.inner_stride(2);
  const bool short_rows = plan.red.ndim == 1 && plan.red.inner_stride(0) == 1 && nred < kMinVectorRun;
  parallel_for(nout, grain, [&](int64_t s, int64_t e) {
    plan.kept.for_each_run(s, e, [&](const int64_t* off, int64_t len) {
      if (short_rows) {
        fold_short_rows(op, pin + off[0], si, nred, len, off[1], s0, off[2], s1);
        return;
      }
      for (int64_t i = 0; i < len; ++i)
        op.store(fold_slice(op, plan, pin + off[0] + i * si), nred, off[1] + i * s0,
                 off[2] + i * s1);
    });
  });
}

// The outer layout: work item w is kept row w / blocks, columns
// [c0, c0 + nc) with c0 = (w % blocks) * max_cols; rows are reduced in
// fixed chunks of chunk_rows.
struct Outer {
  int64_t max_cols, cols, blocks, items, width, chunk_rows, nchunks;
  Outer(const Plan& plan, int64_t max_columns) : max_cols(max_columns) {
    cols = plan.kept.inner_size();
    blocks = (cols + max_cols - 1) / max_cols;
    items = plan.numel_out / cols * blocks;
    width = std::min(cols, max_cols);
    chunk_rows = std::max<int64_t>(1, kChunk / width);
    nchunks = (plan.numel_red + chunk_rows - 1) / chunk_rows;
  }
  // Offsets of item w's first column, and its column count.
  int64_t origin(const Plan& plan, int64_t w, int64_t* off3) const {
    const int64_t c0 = (w % blocks) * max_cols;
    kept_offsets(plan, w / blocks * cols + c0, off3);
    return std::min(max_cols, cols - c0);
  }
};

// Folds chunk `c` of an item's rows into acc[0, nc), from init().
template <class Op>
void fold_rows(const Op& op, const Plan& plan, const Outer& g, typename Op::Acc* acc,
               const typename Op::In* base, int64_t nc, int64_t c) {
  using In = typename Op::In;
  for (int64_t j = 0; j < nc; ++j) acc[j] = op.init();
  const int64_t b = c * g.chunk_rows, e = std::min(plan.numel_red, b + g.chunk_rows);
  const int64_t rs = plan.red.inner_stride(0), cs = plan.kept.inner_stride(0);
  auto rows = [&](auto&& f) {  // f(row, index) for rows [b, e), in order
    if (plan.red.ndim == 1) {
      for (int64_t r = b; r < e; ++r) f(base + r * rs, r);
      return;
    }
    int64_t idx = b;
    plan.red.for_each_run(b, e, [&](const int64_t* off, int64_t len) {
      for (int64_t r = 0; r < len; ++r) f(base + off[0] + r * rs, idx + r);
      idx += len;
    });
  };
  if constexpr (requires { op.fold_chunk(acc, nc, cs, e - b, rows); }) {
    op.fold_chunk(acc, nc, cs, e - b, rows);
  } else if constexpr (requires(const In* const* q) { op.add_rows4(acc, q, nc, cs, b); }) {
    const In* q[4];  // consecutive rows, grouped in fours from the chunk start
    int nq = 0;
    int64_t q0 = 0;
    rows([&](const In* row, int64_t r) {
      if (nq == 0) q0 = r;
      q[nq++] = row;
      if (nq == 4) {
        op.add_rows4(acc, q, nc, cs, q0);
        nq = 0;
      }
    });
    for (int k = 0; k < nq; ++k) op.add_row(acc, q[k], nc, cs, q0 + k);
  } else {
    rows([&](const In* row, int64_t r) { op.add_row(acc, row, nc, cs, r); });
  }
}

template <class Op>
void store_columns(const Op& op, const Plan& plan, const typename Op::Acc* acc, int64_t nc,
                   const int64_t* off) {
  const int64_t s0 = plan.kept.inner_stride(1), s1 = plan.kept.inner_stride(2);
  for (int64_t j = 0; j < nc; ++j) op.store(acc[j], plan.numel_red, off[1] + j * s0, off[2] + j * s1);
}

template <class Op>
void outer(const Op& op, const Plan& plan, const typename Op::In* pin) {
  using Acc = typename Op::Acc;
  constexpr int64_t kCols = kColumnsFor<Acc>;
  const Outer g(plan, kCols);
  const int64_t work = g.chunk_rows * g.width;  // elements per (item, chunk)
  if (g.nchunks > 1 && g.items < max_threads() && !omp_in_parallel() &&
      plan.numel_red * g.width > kParallelGrain) {
    // Few items with many rows: chunks run in parallel, then combine in order.
    const int64_t units = g.items * g.nchunks;
    std::unique_ptr<Acc[]> part(new Acc[static_cast<size_t>(units * g.width)]);
    parallel_for(units, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t s, int64_t e) {
      for (int64_t u = s; u < e; ++u) {
        int64_t off[3];
        const int64_t nc = g.origin(plan, u / g.nchunks, off);
        fold_rows(op, plan, g, part.get() + u * g.width, pin + off[0], nc, u % g.nchunks);
      }
    });
    for (int64_t w = 0; w < g.items; ++w) {
      int64_t off[3];
      const int64_t nc = g.origin(plan, w, off);
      Acc* acc = part.get() + w * g.nchunks * g.width;
      for (int64_t c = 1; c < g.nchunks; ++c)
        for (int64_t j = 0; j < nc; ++j) op.combine(acc[j], acc[c * g.width + j]);
      store_columns(op, plan, acc, nc, off);
    }
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (plan.numel_red * g.width));
  parallel_for(g.items, grain, [&](int64_t s, int64_t e) {
    Acc total[kCols], acc[kCols];
    for (int64_t w = s; w < e; ++w) {
      int64_t off[3];
      const int64_t nc = g.origin(plan, w, off);
      fold_rows(op, plan, g, total, pin + off[0], nc, 0);
      for (int64_t c = 1; c < g.nchunks; ++c) {
        fold_rows(op, plan, g, acc, pin + off[0], nc, c);
        for (int64_t j = 0; j < nc; ++j) op.combine(total[j], acc[j]);
      }
      store_columns(op, plan, total, nc, off);
    }
  });
}

}  // namespace detail

// Runs a planned reduction. An empty slice stores init() (the identity);
// an op without one refuses it, as the core should have.
template <class Op>
void run(const Plan& plan, const typename Op::In* pin, const Op& op) {
  if (plan.numel_out == 0) return;
  if (plan.numel_red == 0) {
    if constexpr (!Op::kHasIdentity) {
      fail(LOOM_STATUS_INVALID_ARGUMENT,
           "cpu: reduction over zero elements has no identity for this op");
    } else {
      const int64_t s0 = plan.kept.inner_stride(1), s1 = plan.kept.inner_stride(2);
      plan.kept.for_each_run(0, plan.numel_out, [&](const int64_t* off, int64_t len) {
        for (int64_t i = 0; i < len; ++i) op.store(op.init(), 0, off[1] + i * s0, off[2] + i * s1);
      });
    }
    return;
  }
  if (plan.inner_reduced) detail::inner(op, plan, pin);
  else detail::outer(op, plan, pin);
}

}  // namespace loom::cpu::reduce
