// _scaled_dot_product_attention_fused and its gradient op
// _scaled_dot_product_attention_backward (docs/kernel_conventions.md, "Nn";
// core/src/ops/ops_attention.cpp has the composites these match), for
// float32 and float64; the 16-bit floats decline to the core's composite.
//
// FlashAttention's tiling on the CPU, so the L x S scores never exist whole:
//  - forward: a task is one batch element's block of kRows queries. It walks
//    the keys kCols at a time: one GEMM for the tile's scores, then per row
//    the online softmax (running max m and sum l; the accumulated output
//    rescaled by exp(m_old - m_new)), then one GEMM adding P·V. A causal
//    block stops at its last row's diagonal, so half the tiles of a square
//    causal problem are never computed. out = O / l, lse = m + log l.
//  - backward: a task is one batch element. Per key tile, over the query
//    tiles that see it: P = exp(s - lse) from the saved lse, dV += Pᵀ·dO,
//    dP = dO·Vᵀ, dS = P ∘ (dP - D) with D = Σ dO∘O per row, then
//    dQ += scale·dS·K and dK += scale·dSᵀ·Q — five GEMMs a tile, dK and dV
//    of the key tile finished before the next.
// Both passes multiply q by the scale once (a copy of q's rows) rather than
// every tile of scores; the backward then gets dK from that copy and scales
// dQ once at the end.
// Operands are read in place when a row's elements are adjacent (the usual
// transposed-heads view of a projection), else packed; every tensor may
// have any strides and broadcast batch dims (stride 0).
#include "common.hpp"
#include "kernels.hpp"
#include "matmul.hpp"
#include "nn_math.hpp"
#include "nn_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace loom::cpu {
namespace {

constexpr int64_t kRows = 64;   // queries per tile
constexpr int64_t kCols = 128;  // keys per tile: a 64 x 128 score tile is 32 KB of float

constexpr const char* kFused = "_scaled_dot_product_attention_fused";
constexpr const char* kBackward = "_scaled_dot_product_attention_backward";

// Row-major C[M, N] = op(A)·op(B) + beta·C; op transposes when ta / tb (A
// then stored [K, M], B [N, K]). float: oneDNN's sgemm (single-threaded
// inside the tasks' parallel region); double: a plain loop.
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
          int64_t ldb, float beta, float* C, int64_t ldc) {
  gemm_f32(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B,
          int64_t ldb, double beta, double* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    double* c = C + i * ldc;
    for (int64_t j = 0; j < N; ++j) c[j] = beta == 0.0 ? 0.0 : beta * c[j];
    for (int64_t k = 0; k < K; ++k) {
      const double a = ta ? A[k * lda + i] : A[i * lda + k];
      if (tb)
        for (int64_t j = 0; j < N; ++j) c[j] += a * B[j * ldb + k];
      else
        for (int64_t j = 0; j < N; ++j) c[j] += a * B[k * ldb + j];
    }
  }
}

// ------------------------------------------------ the rows' exponentials ---
// float rows use nn_math's vector exp (a few ulp, as the softmax kernel);
// double rows std::exp.

// One online-softmax step on a tile row of scores: with the running max m
// and sum l, row becomes exp(row − m_new), l and m advance; returns the
// factor exp(m_old − m_new) the row's accumulated output is rescaled by.
// A row masked so far (m_new −inf) becomes zeros and changes nothing.
template <int B>
[[gnu::always_inline]] inline float online_row_body(float* row, int64_t n, float& m, float& l) {
  const float m_new = std::max(m, nnmath::max_span<B>(row, n));
  if (m_new == nnmath::kNegInfF) {
    std::fill(row, row + n, 0.0f);
    return 1.0f;
  }
  const float alpha = m == nnmath::kNegInfF ? 0.0f : nnmath::exp_f(m - m_new);
  l = l * alpha + nnmath::exp_shift_sum<B>(row, row, n, m_new);
  m = m_new;
  return alpha;
}
LOOM_NN_TARGET(LOOM_NN_AVX512) float online_row_512(float* row, int64_t n, float& m, float& l) {
  return online_row_body<64>(row, n, m, l);
}
LOOM_NN_TARGET(LOOM_NN_AVX2) float online_row_256(float* row, int64_t n, float& m, float& l) {
  return online_row_body<32>(row, n, m, l);
}
float online_row_128(float* row, int64_t n, float& m, float& l) { return online_row_body<16>(row, n, m, l); }

float online_row(float* row, int64_t n, float& m, float& l) {
  static const auto fn = nnmath::pick_isa(&online_row_512, &online_row_256, &online_row_128);
  return fn(row, n, m, l);
}
double online_row(double* row, int64_t n, double& m, double& l) {
  constexpr double ninf = -std::numeric_limits<double>::infinity();
  double m_new = m;
  for (int64_t j = 0; j < n; ++j) m_new = std::max(m_new, row[j]);
  if (m_new == ninf) {
    std::fill(row, row + n, 0.0);
    return 1.0;
  }
  const double alpha = std::exp(m - m_new);
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += (row[j] = std::exp(row[j] - m_new));
  l = l * alpha + sum;
  m = m_new;
  return alpha;
}

// row = exp(row − shift) (the backward's P from the saved lse; a shift of
// −inf gives NaN, as the composite's).
template <int B>
[[gnu::always_inline]] inline void exp_shift_body(float* row, int64_t n, float shift) {
  (void)nnmath::exp_shift_sum<B>(row, row, n, shift);
}
LOOM_NN_TARGET(LOOM_NN_AVX512) void exp_shift_512(float* row, int64_t n, float shift) {
  exp_shift_body<64>(row, n, shift);
}
LOOM_NN_TARGET(LOOM_NN_AVX2) void exp_shift_256(float* row, int64_t n, float shift) {
  exp_shift_body<32>(row, n, shift);
}
void exp_shift_128(float* row, int64_t n, float shift) { exp_shift_body<16>(row, n, shift); }

void exp_shift(float* row, int64_t n, float shift) {
  static const auto fn = nnmath::pick_isa(&exp_shift_512, &exp_shift_256, &exp_shift_128);
  fn(row, n, shift);
}
void exp_shift(double* row, int64_t n, double shift) {
  for (int64_t j = 0; j < n; ++j) row[j] = std::exp(row[j] - shift);
}

// One batch element's [rows, cols] matrix of a descriptor: its first
// element and the strides of its last two dims (lse: one dim, cols 1).
template <class T>
struct Mat {
  T* p = nullptr;
  int64_t rs = 0, cs = 0;
  T& at(int64_t r, int64_t c) const { return p[r * rs + c * cs]; }
};

// The batch walk: batch element b's offset (in elements) in a descriptor
// whose first `nb` dims are the batch dims of q's shape.
int64_t batch_offset(const LoomTensorDesc& d, const LoomTensorDesc& q, int32_t nb, int64_t b) {
  int64_t off = 0;
  for (int32_t i = nb - 1; i >= 0; --i) {
    const int64_t n = q.shape[i];
    off += (b % n) * d.strides[i];
    b /= n;
  }
  return off;
}

template <class T>
Mat<T> matrix(const LoomTensorDesc& d, const LoomTensorDesc& q, int32_t nb, int64_t b) {
  Mat<T> m;
  m.p = plugin::data_ptr<T>(d) + batch_offset(d, q, nb, b);
  m.rs = d.strides[nb];
  m.cs = d.ndim > nb + 1 ? d.strides[nb + 1] : 1;
  return m;
}

// Rows [r0, r0 + n) of `m` (cols wide) times `scale`, row-major in `out`.
template <class T>
void scaled_rows(const Mat<const T>& m, int64_t r0, int64_t n, int64_t cols, T scale, std::vector<T>& out) {
  out.resize(static_cast<size_t>(n * cols));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = scale * m.at(r0 + r, c);
}

// Rows [r0, r0 + n) of `m` (cols wide) as a row-major block with leading
// dim `ld`: in place when its columns are adjacent and rows do not
// overlap, else copied into `buf`.
template <class T>
const T* rows_of(const Mat<const T>& m, int64_t r0, int64_t n, int64_t cols, std::vector<T>& buf, int64_t& ld) {
  if (m.cs == 1 && m.rs >= cols) {
    ld = m.rs;
    return m.p + r0 * m.rs;
  }
  buf.resize(static_cast<size_t>(n * cols));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < cols; ++c) buf[r * cols + c] = m.at(r0 + r, c);
  ld = cols;
  return buf.data();
}

// What both passes read from the call.
struct Problem {
  int32_t nb = 0;  // batch dims
  int64_t batch = 1, L = 0, S = 0, E = 0, Ev = 0;
  bool causal = false;
  double scale = 1;
  const LoomTensorDesc *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr;
};

[[noreturn]] void bad(const char* op, const std::string& why) {
  fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: %s", op, why.c_str());
}

// `t` must have q's batch sizes, then `rows` (and `cols` unless < 0), and
// the dtype `dtype`.
void check_tensor(const char* op, const LoomTensorDesc& t, const char* what, const LoomTensorDesc& q, int64_t rows,
                  int64_t cols, int32_t dtype) {
  const int32_t nb = q.ndim - 2, nd = cols < 0 ? nb + 1 : nb + 2;
  bool ok = t.ndim == nd && t.dtype == dtype;
  for (int32_t d = 0; ok && d < nb; ++d) ok = t.shape[d] == q.shape[d];
  if (ok) ok = t.shape[nb] == rows && (cols < 0 || t.shape[nb + 1] == cols);
  if (!ok)
    bad(op, std::string(what) + " must be a " + plugin::dtype_name(dtype) + " tensor with the query's " +
                std::to_string(nb) + " batch dims and trailing sizes [" + std::to_string(rows) +
                (cols < 0 ? "" : ", " + std::to_string(cols)) + "]");
}

// q, k, v, mask from inputs[first..]; the values (is_causal, scale).
Problem read(const LoomKernelCall& c, const char* op, int32_t first) {
  const LoomTensorDesc& q = c.inputs[first];
  if (q.ndim < 2) bad(op, "query must have at least 2 dims");
  if (q.dtype != LOOM_DTYPE_FLOAT32 && q.dtype != LOOM_DTYPE_FLOAT64)
    fail(LOOM_STATUS_UNSUPPORTED, "cpu %s: %s runs as the composite", op, plugin::dtype_name(q.dtype));
  expect_values(c, op, 2);
  Problem p;
  p.nb = q.ndim - 2;
  for (int32_t d = 0; d < p.nb; ++d) p.batch *= q.shape[d];
  p.q = &q;
  p.k = &c.inputs[first + 1];
  p.v = &c.inputs[first + 2];
  p.L = q.shape[p.nb];
  p.E = q.shape[p.nb + 1];
  p.S = p.k->ndim == q.ndim ? p.k->shape[p.nb] : -1;
  p.Ev = p.v->ndim == q.ndim ? p.v->shape[p.nb + 1] : -1;
  check_tensor(op, *p.k, "key", q, p.S, p.E, q.dtype);
  check_tensor(op, *p.v, "value", q, p.S, p.Ev, q.dtype);
  const LoomTensorDesc& mask = c.inputs[first + 3];
  if (!plugin::is_absent(mask)) {
    check_tensor(op, mask, "attn_mask", q, p.L, p.S, mask.dtype == LOOM_DTYPE_BOOL ? LOOM_DTYPE_BOOL : q.dtype);
    p.mask = &mask;
  }
  p.causal = c.values[0].u.i != 0;
  p.scale = plugin::value_float(c, 1);
  return p;
}

// The mask of one batch element: adds a float mask, or −inf where a bool
// one is false, and −inf above the causal diagonal (key j > query i).
template <class T>
struct Masker {
  bool causal = false;
  Mat<const bool> keep;
  Mat<const T> add;

  Masker(const Problem& p, int64_t b) : causal(p.causal) {
    if (!p.mask) return;
    if (p.mask->dtype == LOOM_DTYPE_BOOL) keep = matrix<const bool>(*p.mask, *p.q, p.nb, b);
    else add = matrix<const T>(*p.mask, *p.q, p.nb, b);
  }
  // s[r * ld + c] for rows i0.., keys j0.., already scaled.
  void apply(T* s, int64_t ld, int64_t i0, int64_t rows, int64_t j0, int64_t cols) const {
    constexpr T ninf = -std::numeric_limits<T>::infinity();
    for (int64_t r = 0; r < rows; ++r) {
      T* row = s + r * ld;
      if (keep.p)
        for (int64_t c = 0; c < cols; ++c)
          if (!keep.at(i0 + r, j0 + c)) row[c] = ninf;
      if (add.p)
        for (int64_t c = 0; c < cols; ++c) row[c] += add.at(i0 + r, j0 + c);
      if (causal)
        for (int64_t c = std::max<int64_t>(0, i0 + r + 1 - j0); c < cols; ++c) row[c] = ninf;
    }
  }
  // 0 where the bool mask or the causal triangle excludes a score (not a
  // float mask's −inf): the scores' gradient there, as the composite's
  // (which keeps a fully masked row's NaN out of q's and k's gradients).
  void zero_excluded(T* s, int64_t ld, int64_t i0, int64_t rows, int64_t j0, int64_t cols) const {
    for (int64_t r = 0; r < rows; ++r) {
      T* row = s + r * ld;
      if (keep.p)
        for (int64_t c = 0; c < cols; ++c)
          if (!keep.at(i0 + r, j0 + c)) row[c] = T(0);
      if (causal)
        for (int64_t c = std::max<int64_t>(0, i0 + r + 1 - j0); c < cols; ++c) row[c] = T(0);
    }
  }
};

// Keys a causal query tile [i0, i0 + rows) sees: up to its last row's.
int64_t keys_seen(const Problem& p, int64_t i0, int64_t rows) {
  return p.causal ? std::min(p.S, i0 + rows) : p.S;
}

// ------------------------------------------------------------- forward ---

template <class T>
void forward_tile(const Problem& p, const LoomKernelCall& c, int64_t b, int64_t i0) {
  constexpr T ninf = -std::numeric_limits<T>::infinity();
  const int64_t rows = std::min(kRows, p.L - i0), E = p.E, Ev = p.Ev;
  const Mat<const T> q = matrix<const T>(*p.q, *p.q, p.nb, b), k = matrix<const T>(*p.k, *p.q, p.nb, b),
                     v = matrix<const T>(*p.v, *p.q, p.nb, b);
  const Mat<T> out = matrix<T>(c.outputs[0], *p.q, p.nb, b), lse = matrix<T>(c.outputs[1], *p.q, p.nb, b);
  const Masker<T> masker(p, b);
  std::vector<T> qs, kbuf, vbuf, s(static_cast<size_t>(rows * kCols)), acc(static_cast<size_t>(rows * Ev), T(0)),
      m(static_cast<size_t>(rows), ninf), l(static_cast<size_t>(rows), T(0));
  int64_t ldk = 0, ldv = 0;
  scaled_rows(q, i0, rows, E, static_cast<T>(p.scale), qs);
  const int64_t seen = keys_seen(p, i0, rows);
  for (int64_t j0 = 0; j0 < seen; j0 += kCols) {
    const int64_t cols = std::min(kCols, seen - j0);
    const T* kj = rows_of(k, j0, cols, E, kbuf, ldk);
    const T* vj = rows_of(v, j0, cols, Ev, vbuf, ldv);
    gemm(false, true, rows, cols, E, qs.data(), E, kj, ldk, T(0), s.data(), kCols);
    masker.apply(s.data(), kCols, i0, rows, j0, cols);
    for (int64_t r = 0; r < rows; ++r) {
      const T alpha = online_row(s.data() + r * kCols, cols, m[r], l[r]);
      if (alpha != T(1))
        for (int64_t e = 0; e < Ev; ++e) acc[r * Ev + e] *= alpha;
    }
    gemm(false, false, rows, Ev, cols, s.data(), kCols, vj, ldv, T(1), acc.data(), Ev);
  }
  for (int64_t r = 0; r < rows; ++r) {
    // l = 0 (every key masked) gives NaN, as the composite's 0/0; S = 0
    // never reaches here.
    for (int64_t e = 0; e < Ev; ++e) out.at(i0 + r, e) = acc[r * Ev + e] / l[r];
    lse.at(i0 + r, 0) = m[r] + std::log(l[r]);
  }
}

template <class T>
void forward(const LoomKernelCall& c, const Problem& p) {
  const int64_t tiles = (p.L + kRows - 1) / kRows;
  if (p.S == 0) {  // no keys: zeros and lse −inf, as the composite's
    parallel_chunks(p.batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const Mat<T> out = matrix<T>(c.outputs[0], *p.q, p.nb, b), lse = matrix<T>(c.outputs[1], *p.q, p.nb, b);
        for (int64_t i = 0; i < p.L; ++i) {
          for (int64_t e = 0; e < p.Ev; ++e) out.at(i, e) = T(0);
          lse.at(i, 0) = -std::numeric_limits<T>::infinity();
        }
      }
    });
    return;
  }
  parallel_chunks(p.batch * tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) forward_tile<T>(p, c, t / tiles, (t % tiles) * kRows);
  });
}

void fused(const LoomKernelCall& c) {
  expect_arity(c, kFused, 4, 2);
  const Problem p = read(c, kFused, 0);
  check_tensor(kFused, c.outputs[0], "output", *p.q, p.L, p.Ev, p.q->dtype);
  check_tensor(kFused, c.outputs[1], "logsumexp", *p.q, p.L, -1, p.q->dtype);
  if (p.q->dtype == LOOM_DTYPE_FLOAT32) forward<float>(c, p);
  else forward<double>(c, p);
}

// ------------------------------------------------------------ backward ---

// One batch element's gradients.
template <class T>
void backward_element(const Problem& p, const LoomKernelCall& c, int64_t b) {
  const int64_t L = p.L, S = p.S, E = p.E, Ev = p.Ev;
  const LoomTensorDesc& qd = *p.q;
  const Mat<const T> go = matrix<const T>(c.inputs[0], qd, p.nb, b), q = matrix<const T>(qd, qd, p.nb, b),
                     k = matrix<const T>(*p.k, qd, p.nb, b), v = matrix<const T>(*p.v, qd, p.nb, b),
                     o = matrix<const T>(c.inputs[5], qd, p.nb, b), lse = matrix<const T>(c.inputs[6], qd, p.nb, b);
  const Mat<T> gq = matrix<T>(c.outputs[0], qd, p.nb, b), gk = matrix<T>(c.outputs[1], qd, p.nb, b),
               gv = matrix<T>(c.outputs[2], qd, p.nb, b);
  const Masker<T> masker(p, b);
  // The whole element's q and dO as row-major blocks (dO is often a
  // broadcast: packed then), D per row, dQ accumulated over key tiles.
  const T scale = static_cast<T>(p.scale);
  std::vector<T> qs, gobuf, kbuf, vbuf;
  int64_t ldgo = 0, ldk = 0, ldv = 0;
  scaled_rows(q, 0, L, E, scale, qs);
  const T* goa = rows_of(go, 0, L, Ev, gobuf, ldgo);
  std::vector<T> D(static_cast<size_t>(L)), dq(static_cast<size_t>(L * E), T(0));
  for (int64_t i = 0; i < L; ++i) {
    T d = 0;
    for (int64_t e = 0; e < Ev; ++e) d += goa[i * ldgo + e] * o.at(i, e);
    D[i] = d;
  }
  std::vector<T> P(static_cast<size_t>(kRows * kCols)), dP(P.size()), dk(static_cast<size_t>(kCols * E)),
      dv(static_cast<size_t>(kCols * Ev));
  for (int64_t j0 = 0; j0 < S; j0 += kCols) {
    const int64_t cols = std::min(kCols, S - j0);
    const T* kj = rows_of(k, j0, cols, E, kbuf, ldk);
    const T* vj = rows_of(v, j0, cols, Ev, vbuf, ldv);
    std::fill(dk.begin(), dk.end(), T(0));
    std::fill(dv.begin(), dv.end(), T(0));
    // Causal: query rows before j0 see none of these keys.
    for (int64_t i0 = p.causal ? j0 / kRows * kRows : 0; i0 < L; i0 += kRows) {
      const int64_t rows = std::min(kRows, L - i0);
      const T* qi = qs.data() + i0 * E;  // scale·q
      const T* goi = goa + i0 * ldgo;
      gemm(false, true, rows, cols, E, qi, E, kj, ldk, T(0), P.data(), kCols);
      masker.apply(P.data(), kCols, i0, rows, j0, cols);
      // P = exp(s − lse): 0 where masked, NaN on a row whose lse is −inf.
      for (int64_t r = 0; r < rows; ++r) exp_shift(P.data() + r * kCols, cols, lse.at(i0 + r, 0));
      gemm(true, false, cols, Ev, rows, P.data(), kCols, goi, ldgo, T(1), dv.data(), Ev);  // dV += Pᵀ dO
      gemm(false, true, rows, cols, Ev, goi, ldgo, vj, ldv, T(0), dP.data(), kCols);       // dP = dO Vᵀ
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j)
          dP[r * kCols + j] = P[r * kCols + j] * (dP[r * kCols + j] - D[i0 + r]);  // dS
      masker.zero_excluded(dP.data(), kCols, i0, rows, j0, cols);
      gemm(false, false, rows, E, cols, dP.data(), kCols, kj, ldk, T(1), dq.data() + i0 * E, E);  // dQ += dS K
      gemm(true, false, cols, E, rows, dP.data(), kCols, qi, E, T(1), dk.data(), E);             // dK += dSᵀ (scale·Q)
    }
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t e = 0; e < E; ++e) gk.at(j0 + j, e) = dk[j * E + e];
      for (int64_t e = 0; e < Ev; ++e) gv.at(j0 + j, e) = dv[j * Ev + e];
    }
  }
  for (int64_t i = 0; i < L; ++i)
    for (int64_t e = 0; e < E; ++e) gq.at(i, e) = scale * dq[i * E + e];
}

void backward(const LoomKernelCall& c) {
  expect_arity(c, kBackward, 7, 3);
  const Problem p = read(c, kBackward, 1);
  const LoomTensorDesc& q = *p.q;
  check_tensor(kBackward, c.inputs[0], "grad_out", q, p.L, p.Ev, q.dtype);
  check_tensor(kBackward, c.inputs[5], "output", q, p.L, p.Ev, q.dtype);
  check_tensor(kBackward, c.inputs[6], "logsumexp", q, p.L, -1, q.dtype);
  check_tensor(kBackward, c.outputs[0], "grad_query", q, p.L, p.E, q.dtype);
  check_tensor(kBackward, c.outputs[1], "grad_key", q, p.S, p.E, q.dtype);
  check_tensor(kBackward, c.outputs[2], "grad_value", q, p.S, p.Ev, q.dtype);
  parallel_chunks(p.batch, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      if (q.dtype == LOOM_DTYPE_FLOAT32) backward_element<float>(p, c, b);
      else backward_element<double>(p, c, b);
    }
  });
}

}  // namespace

void register_attention_kernels(plugin::Registrar& r) {
  constexpr uint64_t mask = plugin::dtype_bit(LOOM_DTYPE_FLOAT32) | plugin::dtype_bit(LOOM_DTYPE_FLOAT64);
  r.kernel(kFused, "cpu", plugin::kernel<fused>, mask);
  r.kernel(kBackward, "cpu", plugin::kernel<backward>, mask);
}

}  // namespace loom::cpu
