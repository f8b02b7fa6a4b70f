// matmul's internal interface: the call reduced to a batched GEMM
// description, shared by the oneDNN path and the plain-loop path.
#pragma once

#include <cstdint>

namespace loom::cpu {

// Batch dims kept after simplification. oneDNN takes at most 12 dims (10
// batch + 2); the loop path takes any count up to this.
inline constexpr int kMaxBatchDims = 62;

// C[b..., M, N] = A[b..., M, K] x B[b..., K, N]. All strides in elements;
// a batch stride of 0 in A or B broadcasts it. Batch dims of size 1 are
// dropped and mergeable neighbours merged, so `nbatch` is minimal.
struct MatmulProblem {
  int32_t dtype;
  int32_t nbatch;
  int64_t batch[kMaxBatchDims];
  int64_t a_batch_stride[kMaxBatchDims];
  int64_t b_batch_stride[kMaxBatchDims];
  int64_t c_batch_stride[kMaxBatchDims];
  int64_t M, N, K;
  int64_t a_m, a_k;  // A's strides along M and K
  int64_t b_k, b_n;  // B's strides along K and N
  int64_t c_m, c_n;  // C's strides along M and N
  const void* a;     // first element of A (byte offset applied)
  const void* b;
  void* c;

  int64_t batch_count() const {
    int64_t n = 1;
    for (int32_t i = 0; i < nbatch; ++i) n *= batch[i];
    return n;
  }
};

// Runs `p` through oneDNN when its dtype, layout and this CPU allow, using a
// cache of primitives. Returns false (having done nothing) otherwise.
bool matmul_onednn(const MatmulProblem& p);

// Row-major float32 C[M, N] = A[M, K] B[K, N] + beta C (A read transposed
// when ta: stored [K, M]; likewise B with tb), for kernels that drive GEMMs
// of their own (the fused RNN). Small products run on the calling thread.
// Throws plugin::Failure when oneDNN fails.
void gemm_f32(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
              int64_t ldb, float beta, float* C, int64_t ldc);

// The portable blocked loop; takes every dtype but bool.
void matmul_loop(const MatmulProblem& p);

}  // namespace loom::cpu
