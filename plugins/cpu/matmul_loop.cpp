// The portable matmul: cache-blocked, packed, OpenMP over (batch, row block).
//
// For each block of kMc rows of C and kNc columns, kKc-deep slices of A and B
// are packed into contiguous buffers of the accumulation type (which also
// converts float16/bfloat16 once instead of per multiply), and the
// micro-kernel is an axpy over a packed row of B that the compiler
// vectorises. Packing makes any strides — transposed, broadcast batch —
// cost the same as contiguous. Accumulation: double for float64, float for
// the other floats, wrapping uint64 for integers (so int results are the
// exact product modulo 2^bits, like PyTorch's).
#include "common.hpp"
#include "loops.hpp"
#include "matmul.hpp"

#include <algorithm>
#include <atomic>
#include <new>
#include <type_traits>
#include <vector>

namespace loom::cpu {
namespace {

constexpr int64_t kMc = 64;   // rows of C per task
constexpr int64_t kNc = 256;  // columns of C per block (a packed row of B fits L1)
constexpr int64_t kKc = 256;  // depth per packed slice

// Multiply-adds per OpenMP grain; below it a matmul stays on one thread.
constexpr int64_t kMatmulGrainMacs = 1 << 16;

template <class T>
using mm_acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                    std::conditional_t<plugin::is_floating_v<T>, float, uint64_t>>;

template <class T>
mm_acc_t<T> to_mm_acc(T v) {
  if constexpr (plugin::is_floating_v<T>) return static_cast<mm_acc_t<T>>(v);
  else return static_cast<uint64_t>(v);
}

// Cp[mc x nc] += Ap[mc x kc] * Bp[kc x nc], all contiguous.
template <class Acc>
LOOM_CPU_CLONES void micro_kernel(Acc* cp, const Acc* ap, const Acc* bp, int64_t mc, int64_t nc,
                                  int64_t kc) {
  for (int64_t i = 0; i < mc; ++i) {
    Acc* crow = cp + i * nc;
    for (int64_t k = 0; k < kc; ++k) {
      const Acc av = ap[i * kc + k];
      const Acc* brow = bp + k * nc;
      for (int64_t j = 0; j < nc; ++j) crow[j] += av * brow[j];
    }
  }
}

template <class T>
void run_task(const MatmulProblem& p, int64_t task, int64_t mblocks, mm_acc_t<T>* ap,
              mm_acc_t<T>* bp, mm_acc_t<T>* cp) {
  using Acc = mm_acc_t<T>;
  int64_t bi = task / mblocks;
  const int64_t m0 = (task % mblocks) * kMc;
  const int64_t mc = std::min(kMc, p.M - m0);
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* c = static_cast<T*>(p.c);
  for (int32_t d = p.nbatch - 1; d >= 0; --d) {  // batch index -> offsets
    const int64_t idx = bi % p.batch[d];
    bi /= p.batch[d];
    a += idx * p.a_batch_stride[d];
    b += idx * p.b_batch_stride[d];
    c += idx * p.c_batch_stride[d];
  }
  a += m0 * p.a_m;
  c += m0 * p.c_m;
  for (int64_t n0 = 0; n0 < p.N; n0 += kNc) {
    const int64_t nc = std::min(kNc, p.N - n0);
    std::fill(cp, cp + mc * nc, Acc(0));
    for (int64_t k0 = 0; k0 < p.K; k0 += kKc) {
      const int64_t kc = std::min(kKc, p.K - k0);
      for (int64_t i = 0; i < mc; ++i)
        for (int64_t k = 0; k < kc; ++k) ap[i * kc + k] = to_mm_acc(a[i * p.a_m + (k0 + k) * p.a_k]);
      for (int64_t k = 0; k < kc; ++k) {
        const T* brow = b + (k0 + k) * p.b_k + n0 * p.b_n;
        Acc* dst = bp + k * nc;
        if (p.b_n == 1) {
          for (int64_t j = 0; j < nc; ++j) dst[j] = to_mm_acc(brow[j]);
        } else {
          for (int64_t j = 0; j < nc; ++j) dst[j] = to_mm_acc(brow[j * p.b_n]);
        }
      }
      micro_kernel(cp, ap, bp, mc, nc, kc);
    }
    for (int64_t i = 0; i < mc; ++i)
      for (int64_t j = 0; j < nc; ++j)
        c[i * p.c_m + (n0 + j) * p.c_n] = static_cast<T>(cp[i * nc + j]);  // modular for ints
  }
}

template <class T>
void matmul_typed(const MatmulProblem& p) {
  using Acc = mm_acc_t<T>;
  const int64_t mblocks = (p.M + kMc - 1) / kMc;
  const int64_t tasks = p.batch_count() * mblocks;
  const int64_t macs_per_task = std::max<int64_t>(1, std::min(kMc, p.M) * p.N * std::max<int64_t>(p.K, 1));
  const int64_t grain = std::max<int64_t>(1, kMatmulGrainMacs / macs_per_task);
  const int64_t mc = std::min(kMc, p.M), nc = std::min(kNc, p.N), kc = std::min(kKc, p.K);
  std::atomic<bool> out_of_memory{false};
  parallel_for(tasks, grain, [&](int64_t s, int64_t e) {
    // Per thread: the three packed blocks (at most 64K+64K+16K elements).
    // An exception must not leave an OpenMP region, so it becomes a flag.
    std::vector<Acc> buf;
    try {
      buf.resize(static_cast<size_t>(mc * kc + kc * nc + mc * nc));
    } catch (...) {
      out_of_memory = true;
      return;
    }
    Acc* ap = buf.data();
    Acc* bp = ap + mc * kc;
    Acc* cp = bp + kc * nc;
    for (int64_t t = s; t < e; ++t) run_task<T>(p, t, mblocks, ap, bp, cp);
  });
  if (out_of_memory) throw std::bad_alloc();
}

}  // namespace

void matmul_loop(const MatmulProblem& p) {
  dispatch<DTypes::NoBool>(p.dtype, "matmul", [&](auto tag) {
    using T = decltype(tag);
    matmul_typed<T>(p);
  });
}

}  // namespace loom::cpu
