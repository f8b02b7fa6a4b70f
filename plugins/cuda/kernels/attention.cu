// Fused scaled-dot-product attention on CUDA (docs/kernel_conventions.md,
// "Nn"): _scaled_dot_product_attention_fused (forward: output and the rows'
// logsumexp) and _scaled_dot_product_attention_backward (FlashAttention-2).
// The L x S scores never reach global memory.
//
// The tile algorithm is attention_ops.cuh (host-tested, one block function
// per pass); attention_call.hpp reads the call. Here: the team that runs a
// block function on the device, the kernels and their launches.
//   forward   one block per (batch entry, 16 queries), key tiles of 32;
//   backward  (1) D = rowsum(dO ∘ O) into a scratch block of the caching
//             allocator, (2) dK, dV: one block per (batch entry, 16 keys)
//             over every query tile, (3) dQ: one block per (batch entry,
//             16 queries) over every key tile. Each gradient element is
//             written once by one thread: no atomics, deterministic.
// float16/bfloat16 accumulate in float, float32 in float, float64 in double
// (SIMT FMAs; no tensor cores yet). Any strides, broadcast (stride 0)
// batch dims and masks included. Declined to the core's composite
// (UNSUPPORTED): by default every call whose L x S scores fit in 1/16 of the
// device's memory (decline_unless_chosen: the composite is faster there),
// head dims above 128, no keys, a non-finite scale, and shared memory beyond
// the device's per-block limit (float64 at large head dims on GPUs with less
// than ~108 KiB).
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "attention_call.hpp"
#include "attention_ops.cuh"
#include "dtype.cuh"
#include "vendor/gpu_target.hpp"

#include <mutex>
#include <string>
#include <unordered_map>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using namespace attention;
using plugin::Failure;

// Runs a phase on every thread of the block at once (attention_ops.cuh);
// `st` is the thread's registers.
template <class State>
struct DeviceTeam {
  State st;
  template <class F>
  __host__ __device__ void block(F&& f) { step(f, true); }
  template <class F>
  __host__ __device__ void warp(F&& f) { step(f, false); }
  template <class F>
  __host__ __device__ void step(F& f, bool whole_block) {
#ifdef __CUDA_ARCH__
    f(static_cast<int>(threadIdx.x), st);
    if (whole_block) __syncthreads();
    else __syncwarp();
#endif
  }
};

// Dynamic shared memory, aligned for double.
template <class C>
__device__ C* shared_tiles() {
  extern __shared__ __align__(16) unsigned char tiles[];
  return reinterpret_cast<C*>(tiles);
}

template <class T>
__global__ void __launch_bounds__(kThreads) forward_kernel(const Problem<T> p) {
  DeviceTeam<ForwardState<opmath_t<T>>> team;
  forward_block(p, blockIdx.x, shared_tiles<opmath_t<T>>(), team);
}
template <class T>
__global__ void __launch_bounds__(kThreads) row_dot_kernel(const Problem<T> p) {
  DeviceTeam<NoState> team;
  row_dot_block(p, blockIdx.x, shared_tiles<opmath_t<T>>(), team);
}
template <class T>
__global__ void __launch_bounds__(kThreads) grad_kv_kernel(const Problem<T> p) {
  DeviceTeam<GradKVState<opmath_t<T>>> team;
  grad_kv_block(p, blockIdx.x, shared_tiles<opmath_t<T>>(), team);
}
template <class T>
__global__ void __launch_bounds__(kThreads) grad_q_kernel(const Problem<T> p) {
  DeviceTeam<GradQState<opmath_t<T>>> team;
  grad_q_block(p, blockIdx.x, shared_tiles<opmath_t<T>>(), team);
}

// The largest dynamic shared memory a block may opt into on `index`.
size_t shared_limit(int index) {
  int bytes = 0;
  check(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, index), index,
        "cudaDeviceGetAttribute (shared memory per block)");
  return static_cast<size_t>(bytes);
}

// The device's memory in bytes, read once per device.
size_t total_memory(int index) {
  static std::mutex mu;
  static std::unordered_map<int, size_t> known;
  const std::lock_guard<std::mutex> lock(mu);
  if (const auto it = known.find(index); it != known.end()) return it->second;
  use_device(index);
  size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), index, "cudaMemGetInfo");
  return known[index] = total;
}

// Declines the call to the composite unless option attention_kernels says
// otherwise. Measured on an H200 (docs/benchmarks.md, "CUDA attention"):
// these SIMT kernels ran 1.5 to 10 times slower than the composite's cuBLAS
// products and softmax at every size tried (L from 64 to 4096, head dims 32
// to 128, float32 and float16), tying only at L = 64. So by default (auto)
// they run only where the composite would hold too much memory: an L x S
// scores tensor larger than 1/16 of the device's memory.
template <class T>
void decline_unless_chosen(const Problem<T>& p, int index, Pass pass) {
  const AttentionKernels mode = options().attention_kernels.load(std::memory_order_relaxed);
  if (mode == AttentionKernels::Always) return;
  const double scores = static_cast<double>(p.batch) * static_cast<double>(p.L) * static_cast<double>(p.S) *
                        static_cast<double>(sizeof(T));
  if (mode == AttentionKernels::Never || scores <= static_cast<double>(total_memory(index)) / 16)
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op_name(pass) +
                                               ": the composite is faster while its scores fit in memory "
                                               "(option attention_kernels is not 'always')");
}

// A pass's kernel over `blocks` blocks with `elems` compute-type elements
// of shared memory (opted into past the default 48 KiB).
template <class T>
class Launcher {
 public:
  Launcher(const Problem<T>& p, int index, cudaStream_t stream, Pass pass)
      : p_(p), index_(index), stream_(stream), pass_(pass) {}

  // Checked before anything is launched, so a decline leaves nothing half done.
  void check_fits(int64_t elems) const {
    const size_t bytes = static_cast<size_t>(elems) * sizeof(opmath_t<T>);
    if (bytes > shared_limit(index_))
      throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op_name(pass_) + ": needs " +
                                                 std::to_string(bytes) + " bytes of shared memory per block, above " +
                                                 "the device's limit");
  }

  template <class Kernel>
  void operator()(Kernel kernel, int64_t blocks, int64_t elems, const char* what) const {
    if (blocks == 0) return;
    const size_t bytes = static_cast<size_t>(elems) * sizeof(opmath_t<T>);
    if (bytes > 48 * 1024)
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
            index_, what);
    kernel<<<static_cast<unsigned>(blocks), kThreads, bytes, stream_>>>(p_);
    check(cudaGetLastError(), index_, what);
  }

 private:
  const Problem<T>& p_;
  int index_;
  cudaStream_t stream_;
  Pass pass_;
};

// A block of the caching allocator, freed when the call returns (stream-
// ordered: reused on this stream only after the kernels queued here).
class Scratch {
 public:
  Scratch(int index, cudaStream_t stream, size_t bytes) : allocator_(allocator(index)) {
    if (bytes) data_ = allocator_.allocate(bytes, stream);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (data_) allocator_.free(data_);
  }
  void* data() const { return data_; }

 private:
  gpu::CachingAllocator& allocator_;
  void* data_ = nullptr;
};

void fused_forward(const LoomKernelCall& c) {
  if (c.num_outputs < 1) throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " attention: no outputs");
  const int index = c.outputs[0].device.index;
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  visit<DTypes::Floating>(c.outputs[0].dtype, op_name(Pass::Forward), [&](auto tag) {
    using T = decltype(tag);
    const Problem<T> p = make_problem<T>(c, Pass::Forward);
    decline_unless_chosen(p, index, Pass::Forward);
    if (forward_blocks(p) == 0) return;
    use_device(index);
    const Launcher<T> launch(p, index, s, Pass::Forward);
    const int64_t elems = ForwardLayout(p.E, p.Ev).total;
    launch.check_fits(elems);
    launch(forward_kernel<T>, forward_blocks(p), elems, "attention forward kernel launch");
  });
}

void fused_backward(const LoomKernelCall& c) {
  if (c.num_outputs < 1) throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME " attention backward: no outputs");
  const int index = c.outputs[0].device.index;
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  visit<DTypes::Floating>(c.outputs[0].dtype, op_name(Pass::Backward), [&](auto tag) {
    using T = decltype(tag);
    using C = opmath_t<T>;
    Problem<T> p = make_problem<T>(c, Pass::Backward);
    decline_unless_chosen(p, index, Pass::Backward);
    if (p.batch == 0) return;
    use_device(index);
    const Launcher<T> launch(p, index, s, Pass::Backward);
    const int64_t kv = GradKVLayout(p.E, p.Ev).total, q = GradQLayout(p.E, p.Ev).total;
    launch.check_fits(kv > q ? kv : q);
    const Scratch row_dot(index, s, static_cast<size_t>(p.batch * p.L) * sizeof(C));
    p.row_dot = static_cast<C*>(row_dot.data());
    launch(row_dot_kernel<T>, row_dot_blocks(p), RowDotLayout().total, "attention backward (row dot) launch");
    launch(grad_kv_kernel<T>, grad_kv_blocks(p), kv, "attention backward (dk, dv) launch");
    launch(grad_q_kernel<T>, grad_q_blocks(p), q, "attention backward (dq) launch");
  });
}

}  // namespace

void register_attention_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("_scaled_dot_product_attention_fused", LOOM_GPU_NAME, kernel<fused_forward>, kFloatingMask);
  r.kernel("_scaled_dot_product_attention_backward", LOOM_GPU_NAME, kernel<fused_backward>, kFloatingMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
