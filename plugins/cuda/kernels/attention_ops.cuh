// The tile algorithm of the fused attention kernels (attention.cu): the
// forward (online softmax over key tiles, FlashAttention), and the
// backward's three passes (FlashAttention-2: D = rowsum(dO ∘ O), then dK/dV
// per key tile over every query tile, then dQ per query tile over every key
// tile; no atomics, so results are deterministic).
//
// Each pass is one function of a thread block, written as a sequence of
// phases that a Team runs: every thread of the block calls the phase with
// its thread index and its own State (its registers), then the team
// synchronises — the whole block (`block`) or the calling warp (`warp`).
// attention.cu's DeviceTeam runs a phase on all threads at once and
// synchronises with __syncthreads / __syncwarp; the host test's team runs
// the threads one after another in a scrambled order, so the same code runs
// on the host, and a phase that read what another thread writes in that
// same phase would give wrong results there. Warp phases touch only their
// warp's rows of the scratch arrays (and read tiles written in block
// phases), which is what makes __syncwarp enough for them.
//
// Layout of the work: a block has kWarps warps of 32 lanes; each warp owns
// kRowsPerWarp rows (queries in the forward and dQ passes, keys in the dK/dV
// pass). The other side goes in tiles of 32 columns, one per lane, for the
// dot products (scores, dO·vᵀ); then lanes switch to owning head-dim
// elements (lane, lane + 32, ...; E, Ev ≤ kMaxHeadDim) to accumulate the
// products over the tile's 32 columns. Tiles live in shared memory in the
// compute type (float for float16/bfloat16/float32, double for float64);
// tiles that lanes read row-per-lane have an odd pitch (no bank conflicts).
//
// Semantics match the core's composites (core/src/ops/ops_attention.cpp):
// scores = scale·q·kᵀ, −inf where is_causal (j > i) or a bool mask
// excludes, plus an additive mask; lse = log Σ exp(scores); a row with
// every score −inf gives lse = −inf and output NaN (0/0); in the backward
// dS is 0 where causal or a bool mask excludes a score (the composite's
// `where`), so such a row's dq is 0 while dv, through P = NaN, is NaN. Key
// tiles a causal row never sees are skipped (they add exact zeros).
#pragma once

#include "dtype.cuh"
#include "geometry.cuh"
#include "row_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <cmath>
#include <cstdint>

namespace loom::LOOM_GPU_NAMESPACE::attention {

inline constexpr int kLanes = 32;                       // columns per tile, one per lane
inline constexpr int kRowsPerWarp = 4;
inline constexpr int kWarps = 4;
inline constexpr int kThreads = kLanes * kWarps;        // per block
inline constexpr int kBlockRows = kRowsPerWarp * kWarps;
inline constexpr int kMaxHeadDim = 128;                 // E and Ev; larger are declined
inline constexpr int kChunks = kMaxHeadDim / kLanes;    // head-dim elements per lane

enum class MaskKind : int32_t { None, Bool, Additive };

// The operands, each with its own strides. Offsets of one batch entry come
// from the batch walk; inside it, element (row, col) is at
// row·row + col·col.
enum Slot : int { kQ, kK, kV, kMask, kOut, kLse, kGradOut, kGradQ, kGradK, kGradV, kSlots };
struct Strides2 {
  int64_t row = 0, col = 0;
};

// One call's problem. The forward reads q, k, v, mask and writes out, lse;
// the backward reads those (out and lse as the forward left them) and
// grad_out, and writes row_dot (its own [batch · L] buffer, D) then
// grad_q, grad_k, grad_v.
template <class T>
struct Problem {
  using C = opmath_t<T>;
  const T* q = nullptr;
  const T* k = nullptr;
  const T* v = nullptr;
  const void* mask = nullptr;  // uint8 (bool) or T
  T* out = nullptr;
  C* lse = nullptr;
  const T* grad_out = nullptr;
  C* row_dot = nullptr;
  T* grad_q = nullptr;
  T* grad_k = nullptr;
  T* grad_v = nullptr;
  MaskKind mask_kind = MaskKind::None;
  bool causal = false;
  C scale = 1;
  int64_t batch = 0, L = 0, S = 0;
  int32_t E = 0, Ev = 0;
  Strides2 at[kSlots];       // inside one batch entry (lse: row only)
  Geometry<kSlots> walk{};   // batch index -> each operand's offset
};

__host__ __device__ inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
__host__ __device__ inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Blocks per pass (one per batch entry and tile of kBlockRows rows).
template <class T> int64_t forward_blocks(const Problem<T>& p) { return p.batch * ceil_div(p.L, kBlockRows); }
template <class T> int64_t row_dot_blocks(const Problem<T>& p) { return ceil_div(p.batch * p.L, kBlockRows); }
template <class T> int64_t grad_kv_blocks(const Problem<T>& p) { return p.batch * ceil_div(p.S, kBlockRows); }
template <class T> int64_t grad_q_blocks(const Problem<T>& p) { return forward_blocks(p); }

// Shared memory of each pass, in compute-type elements. `pitch` rounds a
// row up to an odd length (rows read one per lane).
__host__ __device__ inline int32_t pitch(int32_t n) { return n | 1; }
struct ForwardLayout {
  int64_t q, k, v, s, total;
  __host__ __device__ ForwardLayout(int32_t E, int32_t Ev)
      : q(0), k(q + kBlockRows * E), v(k + kLanes * pitch(E)), s(v + kLanes * Ev), total(s + kBlockRows * kLanes) {}
};
struct RowDotLayout {
  int64_t s, total;
  __host__ __device__ RowDotLayout() : s(0), total(kBlockRows * kLanes) {}
};
struct GradKVLayout {
  int64_t k, v, q, go, lse, d, p, ds, total;
  __host__ __device__ GradKVLayout(int32_t E, int32_t Ev)
      : k(0), v(k + kBlockRows * E), q(v + kBlockRows * Ev), go(q + kLanes * pitch(E)),
        lse(go + kLanes * pitch(Ev)), d(lse + kLanes), p(d + kLanes), ds(p + kBlockRows * kLanes),
        total(ds + kBlockRows * kLanes) {}
};
struct GradQLayout {
  int64_t q, go, k, v, ds, total;
  __host__ __device__ GradQLayout(int32_t E, int32_t Ev)
      : q(0), go(q + kBlockRows * E), k(go + kBlockRows * Ev), v(k + kLanes * pitch(E)),
        ds(v + kLanes * pitch(Ev)), total(ds + kBlockRows * kLanes) {}
};

// ---- per-thread pieces ---------------------------------------------------------------

template <class C>
__host__ __device__ inline C dot(const C* a, const C* b, int32_t n) {
  C s = 0;
  for (int32_t e = 0; e < n; ++e) s += a[e] * b[e];
  return s;
}

// Thread `tid`'s share of copying rows [row0, row0 + rows) of a [limit x cols]
// operand (element (r, c) at base + r·st.row + c·st.col) into `dst` (row
// pitch `ld`), widened; rows past `limit` become zeros.
template <class T, class C>
__host__ __device__ void load_tile(C* dst, int32_t ld, const T* base, Strides2 st, int64_t row0, int32_t rows,
                                   int64_t limit, int32_t cols, int tid) {
  for (int32_t x = tid; x < rows * cols; x += kThreads) {
    const int32_t r = x / cols, c = x - r * cols;
    const int64_t g = row0 + r;
    dst[r * ld + c] = g < limit ? widen(base[g * st.row + c * st.col]) : C(0);
  }
}

// Whether causal (j > i) or the bool mask excludes query i, key j (both in
// range; `off`: the batch entry's offsets).
template <class T>
__host__ __device__ bool excluded(const Problem<T>& p, const int64_t* off, int64_t i, int64_t j) {
  if (p.causal && j > i) return true;
  return p.mask_kind == MaskKind::Bool &&
         !static_cast<const uint8_t*>(p.mask)[off[kMask] + i * p.at[kMask].row + j * p.at[kMask].col];
}

// scale·q·k plus an additive mask, from the rows in shared memory.
template <class T>
__host__ __device__ opmath_t<T> unmasked_score(const Problem<T>& p, const int64_t* off, const opmath_t<T>* qrow,
                                                const opmath_t<T>* krow, int64_t i, int64_t j) {
  opmath_t<T> s = dot(qrow, krow, p.E) * p.scale;
  if (p.mask_kind == MaskKind::Additive)
    s += widen(static_cast<const T*>(p.mask)[off[kMask] + i * p.at[kMask].row + j * p.at[kMask].col]);
  return s;
}

// The score of query i and key j: −inf where excluded.
template <class T>
__host__ __device__ opmath_t<T> score(const Problem<T>& p, const int64_t* off, const opmath_t<T>* qrow,
                                       const opmath_t<T>* krow, int64_t i, int64_t j) {
  return excluded(p, off, i, j) ? opmath_t<T>(-INFINITY) : unmasked_score(p, off, qrow, krow, i, j);
}

// The warp and lane of thread `tid`, and the block row of the warp's row r.
struct Lane {
  int w, lane;
  __host__ __device__ explicit Lane(int tid) : w(tid / kLanes), lane(tid % kLanes) {}
  __host__ __device__ int row(int r) const { return w * kRowsPerWarp + r; }
};

// Where block `block` of a pass works when every batch entry has
// ceil(n / kBlockRows) blocks: its batch entry b and first row; `off` gets
// the entry's offsets of every operand.
struct BlockAt {
  int64_t b, first;
};
template <class T>
__host__ __device__ BlockAt block_at(const Problem<T>& p, int64_t block, int64_t n, int64_t (&off)[kSlots]) {
  const int64_t tiles = ceil_div(n, kBlockRows);
  const BlockAt at{block / tiles, (block % tiles) * kBlockRows};
  p.walk.offsets(at.b, off);
  return at;
}

// The keys the query rows [i0, i0 + kBlockRows) see: all of them, or with
// is_causal those up to the block's last row (later tiles are masked for
// every row of the block).
template <class T>
__host__ __device__ int64_t key_end(const Problem<T>& p, int64_t i0) {
  return p.causal ? min64(p.S, min64(i0 + kBlockRows, p.L)) : p.S;
}

// acc[r][c] += Σₓ w[row(r)·32 + x] · tile[x·ld + d] over the tile's 32
// columns, for the lane's head-dim elements d = lane + 32c below n.
template <class C>
__host__ __device__ void accumulate_tile(C (&acc)[kRowsPerWarp][kChunks], const C* w, const C* tile, int32_t ld,
                                         int32_t n, const Lane& t) {
  for (int x = 0; x < kLanes; ++x) {
    C tx[kChunks];
    for (int c = 0; c < kChunks; ++c) {
      const int d = t.lane + c * kLanes;
      tx[c] = d < n ? tile[x * ld + d] : C(0);
    }
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const C wx = w[t.row(r) * kLanes + x];
      for (int c = 0; c < kChunks; ++c) acc[r][c] += wx * tx[c];
    }
  }
}

// Writes factor·vals[c] to row `row` of an [rows x n] operand (element
// (row, d) at base + row·st.row + d·st.col), the lane's elements d < n.
template <class T, class C>
__host__ __device__ void store_row(T* base, Strides2 st, int64_t row, const C (&vals)[kChunks], int32_t n, C factor,
                                   const Lane& t) {
  for (int c = 0; c < kChunks; ++c) {
    const int d = t.lane + c * kLanes;
    if (d < n) base[row * st.row + d * st.col] = narrow<T>(vals[c] * factor);
  }
}

// ---- forward ---------------------------------------------------------------------------

// A lane's running state for its warp's rows: the row max m (the same in
// every lane), the lane's share l of Σ exp(s − m) (its own columns), the
// rescale factor of the current tile, and its head-dim elements of Σ p·v.
template <class C>
struct ForwardState {
  C m[kRowsPerWarp], l[kRowsPerWarp], alpha[kRowsPerWarp];
  C acc[kRowsPerWarp][kChunks];
};

// Block `block` of forward_blocks(p): batch entry block / tiles, query rows
// [i0, i0 + kBlockRows). `smem` holds ForwardLayout(E, Ev).total elements.
#pragma nv_exec_check_disable  // the host test's team is host-only
template <class T, class Team>
__host__ __device__ void forward_block(const Problem<T>& p, int64_t block, opmath_t<T>* smem, Team& team) {
  using C = opmath_t<T>;
  using State = ForwardState<C>;
  int64_t off[kSlots];
  const int64_t i0 = block_at(p, block, p.L, off).first;
  const ForwardLayout at(p.E, p.Ev);
  C *sq = smem + at.q, *sk = smem + at.k, *sv = smem + at.v, *ss = smem + at.s;
  const int32_t E = p.E, Ev = p.Ev, pk = pitch(E);

  team.block([&](int tid, State& st) {
    load_tile(sq, E, p.q + off[kQ], p.at[kQ], i0, kBlockRows, p.L, E, tid);
    for (int r = 0; r < kRowsPerWarp; ++r) {
      st.m[r] = -INFINITY;
      st.l[r] = 0;
      for (int c = 0; c < kChunks; ++c) st.acc[r][c] = 0;
    }
  });
  for (int64_t j0 = 0; j0 < key_end(p, i0); j0 += kLanes) {
    team.block([&](int tid, State&) {
      load_tile(sk, pk, p.k + off[kK], p.at[kK], j0, kLanes, p.S, E, tid);
      load_tile(sv, Ev, p.v + off[kV], p.at[kV], j0, kLanes, p.S, Ev, tid);
    });
    // Scores: lane = key j0 + lane.
    team.warp([&](int tid, State&) {
      const Lane t(tid);
      const int64_t j = j0 + t.lane;
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const int row = t.row(r);
        const int64_t i = i0 + row;
        ss[row * kLanes + t.lane] =
            i < p.L && j < p.S ? score(p, off, sq + row * E, sk + t.lane * pk, i, j) : C(-INFINITY);
      }
    });
    // The tile's max joins the row's (NaN never becomes the max: it
    // reaches the output through exp instead).
    team.warp([&](int tid, State& st) {
      const Lane t(tid);
      for (int r = 0; r < kRowsPerWarp; ++r) {
        C mx = st.m[r];
        for (int x = 0; x < kLanes; ++x) {
          const C s = ss[t.row(r) * kLanes + x];
          mx = s > mx ? s : mx;
        }
        st.alpha[r] = mx == st.m[r] ? C(1) : rows::exp_of(st.m[r] - mx);
        st.m[r] = mx;
      }
    });
    // Probabilities (unnormalised) replace the scores.
    team.warp([&](int tid, State& st) {
      const Lane t(tid);
      for (int r = 0; r < kRowsPerWarp; ++r) {
        C& s = ss[t.row(r) * kLanes + t.lane];
        const C e = s == C(-INFINITY) ? C(0) : rows::exp_of(s - st.m[r]);
        s = e;
        st.l[r] = st.l[r] * st.alpha[r] + e;
        for (int c = 0; c < kChunks; ++c) st.acc[r][c] *= st.alpha[r];
      }
    });
    // acc += p·v over the tile; lane = head-dim elements. A block phase:
    // the next tile overwrites sk and sv.
    team.block([&](int tid, State& st) { accumulate_tile(st.acc, ss, sv, Ev, Ev, Lane(tid)); });
  }
  team.warp([&](int tid, State& st) {
    const Lane t(tid);
    for (int r = 0; r < kRowsPerWarp; ++r) ss[t.row(r) * kLanes + t.lane] = st.l[r];
  });
  // l = 0 (every key masked) gives 0/0 = NaN and lse = −inf + log 0 = −inf.
  team.warp([&](int tid, State& st) {
    const Lane t(tid);
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t i = i0 + t.row(r);
      if (i >= p.L) continue;
      C l = 0;
      for (int x = 0; x < kLanes; ++x) l += ss[t.row(r) * kLanes + x];
      store_row(p.out + off[kOut], p.at[kOut], i, st.acc[r], Ev, C(1) / l, t);
      if (t.lane == 0) p.lse[off[kLse] + i * p.at[kLse].row] = st.m[r] + rows::log_of(l);
    }
  });
}

// ---- backward --------------------------------------------------------------------------

struct NoState {};

// Block `block` of row_dot_blocks(p): D[g] = Σ_d dO[g, d]·O[g, d] for the
// flattened rows g = b·L + i in [block·kBlockRows, +kBlockRows).
#pragma nv_exec_check_disable  // the host test's team is host-only
template <class T, class Team>
__host__ __device__ void row_dot_block(const Problem<T>& p, int64_t block, opmath_t<T>* smem, Team& team) {
  using C = opmath_t<T>;
  C* ss = smem + RowDotLayout().s;
  const int64_t rows = p.batch * p.L;
  team.warp([&](int tid, auto&) {
    const Lane t(tid);
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t g = block * kBlockRows + t.row(r);
      C part = 0;
      if (g < rows) {
        int64_t off[kSlots];
        p.walk.offsets(g / p.L, off);
        const int64_t i = g % p.L;
        for (int d = t.lane; d < p.Ev; d += kLanes)
          part += widen(p.grad_out[off[kGradOut] + i * p.at[kGradOut].row + d * p.at[kGradOut].col]) *
                  widen(p.out[off[kOut] + i * p.at[kOut].row + d * p.at[kOut].col]);
      }
      ss[t.row(r) * kLanes + t.lane] = part;
    }
  });
  team.warp([&](int tid, auto&) {
    const Lane t(tid);
    if (t.lane != 0) return;
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t g = block * kBlockRows + t.row(r);
      if (g >= rows) continue;
      C sum = 0;
      for (int x = 0; x < kLanes; ++x) sum += ss[t.row(r) * kLanes + x];
      p.row_dot[g] = sum;
    }
  });
}

// P and dS of query i, key j (both in range): P = exp(s − lse_i),
// dS = P·(dO_i·v_j − D_i). An excluded pair has P = exp(−inf − lse_i)
// (0; NaN when lse_i = −inf: the row had no key, as in the forward) and
// dS = 0, as the composite's `where` gives; an additive −inf is no
// exclusion (dS = 0·(…), NaN for a row of them, as the composite).
template <class C>
struct ProbGrad {
  C p, ds;
};
template <class T>
__host__ __device__ ProbGrad<opmath_t<T>> prob_grad(const Problem<T>& p, const int64_t* off,
                                                     const opmath_t<T>* qrow, const opmath_t<T>* krow,
                                                     const opmath_t<T>* gorow, const opmath_t<T>* vrow,
                                                     int64_t i, int64_t j, opmath_t<T> lse, opmath_t<T> d) {
  using C = opmath_t<T>;
  if (excluded(p, off, i, j)) return {rows::exp_of(C(-INFINITY) - lse), C(0)};
  const C pr = rows::exp_of(unmasked_score(p, off, qrow, krow, i, j) - lse);
  return {pr, pr * (dot(gorow, vrow, p.Ev) - d)};
}

template <class C>
struct GradKVState {
  C dk[kRowsPerWarp][kChunks], dv[kRowsPerWarp][kChunks];
};

// Block `block` of grad_kv_blocks(p): keys [j0, j0 + kBlockRows) of batch
// entry b, over every query tile that can see them; needs row_dot.
#pragma nv_exec_check_disable  // the host test's team is host-only
template <class T, class Team>
__host__ __device__ void grad_kv_block(const Problem<T>& p, int64_t block, opmath_t<T>* smem, Team& team) {
  using C = opmath_t<T>;
  using State = GradKVState<C>;
  int64_t off[kSlots];
  const BlockAt pos = block_at(p, block, p.S, off);
  const int64_t b = pos.b, j0 = pos.first;
  const GradKVLayout at(p.E, p.Ev);
  C *sk = smem + at.k, *sv = smem + at.v, *sq = smem + at.q, *sgo = smem + at.go;
  C *slse = smem + at.lse, *sd = smem + at.d, *sp = smem + at.p, *sds = smem + at.ds;
  const int32_t E = p.E, Ev = p.Ev, pq = pitch(E), pgo = pitch(Ev);

  team.block([&](int tid, State& st) {
    load_tile(sk, E, p.k + off[kK], p.at[kK], j0, kBlockRows, p.S, E, tid);
    load_tile(sv, Ev, p.v + off[kV], p.at[kV], j0, kBlockRows, p.S, Ev, tid);
    for (int r = 0; r < kRowsPerWarp; ++r)
      for (int c = 0; c < kChunks; ++c) st.dk[r][c] = st.dv[r][c] = 0;
  });
  // Causal: queries before j0 see none of these keys.
  const int64_t query_begin = p.causal ? j0 / kLanes * kLanes : 0;
  for (int64_t q0 = query_begin; q0 < p.L; q0 += kLanes) {
    team.block([&](int tid, State&) {
      load_tile(sq, pq, p.q + off[kQ], p.at[kQ], q0, kLanes, p.L, E, tid);
      load_tile(sgo, pgo, p.grad_out + off[kGradOut], p.at[kGradOut], q0, kLanes, p.L, Ev, tid);
      if (tid < kLanes) {
        const int64_t i = q0 + tid;
        slse[tid] = i < p.L ? p.lse[off[kLse] + i * p.at[kLse].row] : C(0);
        sd[tid] = i < p.L ? p.row_dot[b * p.L + i] : C(0);
      }
    });
    // P and dS: lane = query q0 + lane.
    team.warp([&](int tid, State&) {
      const Lane t(tid);
      const int64_t i = q0 + t.lane;
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const int row = t.row(r);
        const int64_t j = j0 + row;
        ProbGrad<C> g{0, 0};
        if (i < p.L && j < p.S)
          g = prob_grad(p, off, sq + t.lane * pq, sk + row * E, sgo + t.lane * pgo, sv + row * Ev, i, j,
                        slse[t.lane], sd[t.lane]);
        sp[row * kLanes + t.lane] = g.p;
        sds[row * kLanes + t.lane] = g.ds;
      }
    });
    // dv += Pᵀ·dO, dk += dSᵀ·q over the tile; lane = head-dim elements.
    team.block([&](int tid, State& st) {
      const Lane t(tid);
      accumulate_tile(st.dv, sp, sgo, pgo, Ev, t);
      accumulate_tile(st.dk, sds, sq, pq, E, t);
    });
  }
  team.warp([&](int tid, State& st) {
    const Lane t(tid);
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t j = j0 + t.row(r);
      if (j >= p.S) continue;
      store_row(p.grad_k + off[kGradK], p.at[kGradK], j, st.dk[r], E, p.scale, t);
      store_row(p.grad_v + off[kGradV], p.at[kGradV], j, st.dv[r], Ev, C(1), t);
    }
  });
}

template <class C>
struct GradQState {
  C dq[kRowsPerWarp][kChunks];
  C lse[kRowsPerWarp], d[kRowsPerWarp];
};

// Block `block` of grad_q_blocks(p): queries [i0, i0 + kBlockRows) of batch
// entry b over every key tile they see; needs row_dot.
#pragma nv_exec_check_disable  // the host test's team is host-only
template <class T, class Team>
__host__ __device__ void grad_q_block(const Problem<T>& p, int64_t block, opmath_t<T>* smem, Team& team) {
  using C = opmath_t<T>;
  using State = GradQState<C>;
  int64_t off[kSlots];
  const BlockAt pos = block_at(p, block, p.L, off);
  const int64_t b = pos.b, i0 = pos.first;
  const GradQLayout at(p.E, p.Ev);
  C *sq = smem + at.q, *sgo = smem + at.go, *sk = smem + at.k, *sv = smem + at.v, *sds = smem + at.ds;
  const int32_t E = p.E, Ev = p.Ev, pk = pitch(E), pv = pitch(Ev);

  team.block([&](int tid, State& st) {
    load_tile(sq, E, p.q + off[kQ], p.at[kQ], i0, kBlockRows, p.L, E, tid);
    load_tile(sgo, Ev, p.grad_out + off[kGradOut], p.at[kGradOut], i0, kBlockRows, p.L, Ev, tid);
    const Lane t(tid);
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t i = i0 + t.row(r);
      st.lse[r] = i < p.L ? p.lse[off[kLse] + i * p.at[kLse].row] : C(0);
      st.d[r] = i < p.L ? p.row_dot[b * p.L + i] : C(0);
      for (int c = 0; c < kChunks; ++c) st.dq[r][c] = 0;
    }
  });
  for (int64_t j0 = 0; j0 < key_end(p, i0); j0 += kLanes) {
    team.block([&](int tid, State&) {
      load_tile(sk, pk, p.k + off[kK], p.at[kK], j0, kLanes, p.S, E, tid);
      load_tile(sv, pv, p.v + off[kV], p.at[kV], j0, kLanes, p.S, Ev, tid);
    });
    // dS: lane = key j0 + lane.
    team.warp([&](int tid, State& st) {
      const Lane t(tid);
      const int64_t j = j0 + t.lane;
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const int row = t.row(r);
        const int64_t i = i0 + row;
        C ds = 0;
        if (i < p.L && j < p.S)
          ds = prob_grad(p, off, sq + row * E, sk + t.lane * pk, sgo + row * Ev, sv + t.lane * pv, i, j, st.lse[r],
                         st.d[r]).ds;
        sds[row * kLanes + t.lane] = ds;
      }
    });
    // dq += dS·k over the tile; lane = head-dim elements.
    team.block([&](int tid, State& st) { accumulate_tile(st.dq, sds, sk, pk, E, Lane(tid)); });
  }
  team.warp([&](int tid, State& st) {
    const Lane t(tid);
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t i = i0 + t.row(r);
      if (i < p.L) store_row(p.grad_q + off[kGradQ], p.at[kGradQ], i, st.dq[r], E, p.scale, t);
    }
  });
}

}  // namespace loom::LOOM_GPU_NAMESPACE::attention
