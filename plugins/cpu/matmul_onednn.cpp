// matmul through oneDNN's matmul primitive, with a cache of primitives.
//
// Building a primitive (primitive_desc + JIT) costs far more than running a
// small one, and models call matmul with the same few shapes over and over,
// so primitives are kept in a small LRU keyed by everything that shapes one:
// dtype, dims and strides of src, weights and dst. The key also remembers
// failures: a layout or dtype oneDNN cannot do well (no implementation, or
// only its slow reference one — e.g. bfloat16 on a CPU without AVX-512) is
// cached as "use the loop", so the check happens once per shape, at run time.
//
// Broadcast batch dims (stride 0 in loom) become size-1 dims, which oneDNN
// broadcasts itself. oneDNN uses the same OpenMP runtime as the plugin.
#include "common.hpp"
#include "conv_onednn_cache.hpp"  // onednn::SerialBelow
#include "matmul.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace loom::cpu {
namespace {

using dnnl::memory;

constexpr size_t kCacheCapacity = 64;
constexpr int kOnednnMaxDims = 12;  // DNNL_MAX_NDIMS in oneDNN 2.x

struct CachedPrimitive {
  std::vector<int64_t> key;
  bool usable = false;  // false: oneDNN has nothing good here; use the loop
  memory::desc src_md, wei_md, dst_md;
  dnnl::matmul prim;
  uint64_t last_use = 0;
};

class PrimitiveCache {
 public:
  // The entry for `key`, built by `make` on a miss. Shared ownership: an
  // entry evicted while another thread runs it stays alive until that run
  // ends. Two threads missing together may both build; the cache keeps both
  // briefly and the older one ages out.
  template <class Make>
  std::shared_ptr<const CachedPrimitive> get(const std::vector<int64_t>& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& e : entries_) {
        if (e->key == key) {
          e->last_use = ++clock_;
          return e;
        }
      }
    }
    // Build outside the lock: creation may JIT for milliseconds.
    auto fresh = std::make_shared<CachedPrimitive>(make());
    fresh->key = key;
    std::lock_guard<std::mutex> lock(mu_);
    fresh->last_use = ++clock_;
    if (entries_.size() >= kCacheCapacity) {
      auto lru = std::min_element(entries_.begin(), entries_.end(), [](const auto& x, const auto& y) {
        return x->last_use < y->last_use;
      });
      *lru = fresh;
    } else {
      entries_.push_back(fresh);
    }
    return fresh;
  }

 private:
  std::mutex mu_;
  uint64_t clock_ = 0;
  std::vector<std::shared_ptr<CachedPrimitive>> entries_;
};

// The cache and the engine are leaked on purpose: destroying oneDNN objects
// from static destructors at exit races oneDNN's own teardown, and the
// plugin stays loaded until exit anyway.
PrimitiveCache& cache() {
  static PrimitiveCache* c = new PrimitiveCache;
  return *c;
}

const dnnl::engine& engine() {
  static const dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

// One in-order CPU stream per thread: streams are not meant to be shared
// between threads that submit concurrently.
dnnl::stream& thread_stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

// dims/strides of one operand. A broadcast batch dim (stride 0) becomes a
// size-1 dim; the stride given to a size-1 dim never matters, so it gets the
// dense value oneDNN's layout checks expect.
struct Layout {
  memory::dims dims, strides;
};

Layout layout(const MatmulProblem& p, const int64_t* batch_strides, int64_t rows, int64_t cols,
              int64_t row_stride, int64_t col_stride, bool is_dst) {
  Layout l;
  const int nd = p.nbatch + 2;
  l.dims.resize(static_cast<size_t>(nd));
  l.strides.resize(static_cast<size_t>(nd));
  for (int i = 0; i < p.nbatch; ++i) {
    const bool bcast = !is_dst && batch_strides[i] == 0;
    l.dims[static_cast<size_t>(i)] = bcast ? 1 : p.batch[i];
    l.strides[static_cast<size_t>(i)] = batch_strides[i];
  }
  l.dims[static_cast<size_t>(nd - 2)] = rows;
  l.dims[static_cast<size_t>(nd - 1)] = cols;
  l.strides[static_cast<size_t>(nd - 2)] = row_stride;
  l.strides[static_cast<size_t>(nd - 1)] = col_stride;
  // Size-1 dims: replace their stride by the extent of everything inside.
  for (int i = nd - 1; i >= 0; --i) {
    if (l.dims[static_cast<size_t>(i)] != 1) continue;
    int64_t extent = 1;
    for (int j = i + 1; j < nd; ++j)
      extent = std::max(extent, l.strides[static_cast<size_t>(j)] * l.dims[static_cast<size_t>(j)]);
    l.strides[static_cast<size_t>(i)] = extent;
  }
  return l;
}

CachedPrimitive build(memory::data_type dt, const Layout& src, const Layout& wei,
                      const Layout& dst) {
  CachedPrimitive c;
  try {
    c.src_md = memory::desc(src.dims, dt, src.strides);
    c.wei_md = memory::desc(wei.dims, dt, wei.strides);
    c.dst_md = memory::desc(dst.dims, dt, dst.strides);
    const dnnl::matmul::desc d(c.src_md, c.wei_md, c.dst_md);
    const dnnl::matmul::primitive_desc pd(d, engine(), /*allow_empty=*/true);
    if (!pd) return c;
    // The reference implementation is a naive loop: ours is faster.
    const char* impl = pd.impl_info_str();
    if (impl == nullptr || std::strncmp(impl, "ref", 3) == 0) return c;
    c.prim = dnnl::matmul(pd);
    c.usable = true;
  } catch (const dnnl::error&) {
    c.usable = false;
  }
  return c;
}

// A row-major operand for dnnl_sgemm: 'N' with leading dimension `ld` when
// its columns are unit-stride, 'T' when its rows are. Anything else (both
// strides > 1) is not a BLAS layout.
struct BlasOperand {
  char trans;
  int64_t ld;
};

bool blas_operand(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride,
                  BlasOperand& out) {
  if ((col_stride == 1 || cols == 1) && row_stride >= std::max<int64_t>(1, cols)) {
    out = {'N', rows == 1 ? std::max<int64_t>(1, cols) : row_stride};
    return true;
  }
  if ((row_stride == 1 || rows == 1) && col_stride >= std::max<int64_t>(1, rows)) {
    out = {'T', cols == 1 ? std::max<int64_t>(1, rows) : col_stride};
    return true;
  }
  return false;
}

// Multiply-adds below which a GEMM runs on one thread: 2^22 is ~100-200 us
// of single-core work, the point where a second thread starts to pay.
constexpr int64_t kSerialGemmMacs = int64_t{1} << 22;

// One unbatched float32 GEMM: dnnl_sgemm directly. The matmul primitive
// lands in the same JIT GEMM but adds its own dispatch, which measured ~7%
// at 1024^3 (docs/benchmarks.md, "matmul").
bool sgemm_direct(const MatmulProblem& p) {
  if (p.dtype != LOOM_DTYPE_FLOAT32 || p.nbatch != 0 || p.K == 0) return false;
  BlasOperand a{}, b{}, c{};
  if (!blas_operand(p.M, p.K, p.a_m, p.a_k, a) || !blas_operand(p.K, p.N, p.b_k, p.b_n, b) ||
      !blas_operand(p.M, p.N, p.c_m, p.c_n, c) || c.trans != 'N')
    return false;
  // dnnl_sgemm spreads even a 32x256x256 GEMM over every OpenMP thread; for
  // small ones the team's wake-up (and, on a busy machine, its barrier) costs
  // more than the arithmetic, so they run on the calling thread only.
  const onednn::SerialBelow serial(p.M * p.N * p.K, kSerialGemmMacs);
  return dnnl_sgemm(a.trans, b.trans, p.M, p.N, p.K, 1.0f, static_cast<const float*>(p.a), a.ld,
                    static_cast<const float*>(p.b), b.ld, 0.0f, static_cast<float*>(p.c),
                    c.ld) == dnnl_success;
}

}  // namespace

void gemm_f32(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
              int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // nothing to multiply: C = beta C
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  const onednn::SerialBelow serial(M * N * K, kSerialGemmMacs);
  if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, 1.0f, A, std::max<int64_t>(lda, 1), B,
                 std::max<int64_t>(ldb, 1), beta, C, std::max<int64_t>(ldc, 1)) != dnnl_success)
    fail(LOOM_STATUS_INTERNAL, "cpu: oneDNN's sgemm failed (%lld x %lld x %lld)", static_cast<long long>(M),
         static_cast<long long>(N), static_cast<long long>(K));
}

bool matmul_onednn(const MatmulProblem& p) {
  if (sgemm_direct(p)) return true;
  if (p.nbatch + 2 > kOnednnMaxDims) return false;
  memory::data_type dt;
  switch (p.dtype) {
    case LOOM_DTYPE_FLOAT32: dt = memory::data_type::f32; break;
    case LOOM_DTYPE_BFLOAT16: dt = memory::data_type::bf16; break;
    default: return false;
  }
  const Layout src = layout(p, p.a_batch_stride, p.M, p.K, p.a_m, p.a_k, false);
  const Layout wei = layout(p, p.b_batch_stride, p.K, p.N, p.b_k, p.b_n, false);
  const Layout dst = layout(p, p.c_batch_stride, p.M, p.N, p.c_m, p.c_n, true);

  std::vector<int64_t> key;
  key.reserve(2 + 6 * src.dims.size());
  key.push_back(p.dtype);
  key.push_back(static_cast<int64_t>(src.dims.size()));
  for (const Layout* l : {&src, &wei, &dst}) {
    key.insert(key.end(), l->dims.begin(), l->dims.end());
    key.insert(key.end(), l->strides.begin(), l->strides.end());
  }
  try {
    const auto entry = cache().get(key, [&] { return build(dt, src, wei, dst); });
    if (!entry->usable) return false;
    memory a(entry->src_md, engine(), const_cast<void*>(p.a));
    memory b(entry->wei_md, engine(), const_cast<void*>(p.b));
    memory c(entry->dst_md, engine(), p.c);
    dnnl::stream& s = thread_stream();
    entry->prim.execute(s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    s.wait();
  } catch (const dnnl::error&) {
    return false;  // the loop recomputes every output element
  }
  return true;
}

}  // namespace loom::cpu
