// The Σ-family reductions on CUDA — sum, mean, prod, all, any — and the
// registration of every reduction and scan kernel (docs/kernel_conventions.md
// "Reductions"; the CPU plugin's reduce.cpp registers the same ops and
// masks). Planning is reduce_plan.hpp's, execution reduce_kernels.cuh's.
#include "../device.hpp"
#include "dtype.cuh"
#include "reduce.hpp"
#include "reduce_kernels.cuh"
#include "reduce_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <atomic>

namespace loom::LOOM_GPU_NAMESPACE {

int multiprocessor_count(int index) {
  static std::atomic<int> cache[kMaxDevices] = {};
  const bool cached = index >= 0 && index < kMaxDevices;
  int n = cached ? cache[index].load(std::memory_order_relaxed) : 0;
  if (n > 0) return n;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, index) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();  // clear it: a guess only shapes the launch
    n = 132;
  }
  if (cached) cache[index].store(n, std::memory_order_relaxed);
  return n;
}

void check_launch(const char* op) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR,
                          std::string(LOOM_GPU_NAME " ") + op + ": kernel launch failed: " + cudaGetErrorString(e));
}

namespace {

// Output in the input's dtype (sum, mean, prod).
template <DTypes Set, template <class> class MakeOp>
void same_dtype_reduction(const LoomKernelCall& c, const char* name) {
  if (c.num_inputs < 1) throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + name + ": no input");
  const int32_t dtype = c.inputs[0].dtype;
  const ReducePlan plan = prepare_reduction(c, name, 1, &dtype, 1);
  visit<Set>(dtype, name, [&](auto tag) {
    using T = decltype(tag);
    run_reduction(MakeOp<T>::make(plugin::data_ptr<T>(c.outputs[0])), plan, c.inputs[0], c.inputs[0].device.index,
                  static_cast<cudaStream_t>(c.stream), name);
  });
}

template <class T>
struct MakeSum {
  static reduce::SumOp<T, false> make(T* out) { return {out}; }
};
template <class T>
struct MakeMean {
  static reduce::SumOp<T, true> make(T* out) { return {out}; }
};
template <class T>
struct MakeProd {
  static reduce::ProdOp<T> make(T* out) { return {out}; }
};

void sum(const LoomKernelCall& c) { same_dtype_reduction<DTypes::All, MakeSum>(c, "sum"); }
void mean(const LoomKernelCall& c) { same_dtype_reduction<DTypes::Floating, MakeMean>(c, "mean"); }
void prod(const LoomKernelCall& c) { same_dtype_reduction<DTypes::All, MakeProd>(c, "prod"); }

// all/any read the input's own dtype as raw words of its width: which bits
// make a value non-zero is all that differs between dtypes of one width.
template <bool IsAll>
void logical(const LoomKernelCall& c, const char* name) {
  const int32_t out_dtype = LOOM_DTYPE_BOOL;
  const ReducePlan plan = prepare_reduction(c, name, 1, &out_dtype, 1);
  const LoomTensorDesc& in = c.inputs[0];
  bool* out = plugin::data_ptr<bool>(c.outputs[0]);
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  const int index = in.device.index;
  auto go = [&](auto mask) {
    using Word = decltype(mask);
    run_reduction(reduce::LogicalOp<Word, IsAll>{mask, out}, plan, in, index, s, name);
  };
  switch (in.dtype) {
    case LOOM_DTYPE_BOOL:
    case LOOM_DTYPE_UINT8:
    case LOOM_DTYPE_INT8: return go(uint8_t{0xff});
    case LOOM_DTYPE_INT16: return go(uint16_t{0xffff});
    case LOOM_DTYPE_FLOAT16:
    case LOOM_DTYPE_BFLOAT16: return go(uint16_t{0x7fff});  // ±0 is the only zero
    case LOOM_DTYPE_INT32: return go(uint32_t{0xffffffffu});
    case LOOM_DTYPE_FLOAT32: return go(uint32_t{0x7fffffffu});
    case LOOM_DTYPE_INT64: return go(~uint64_t{0});
    case LOOM_DTYPE_FLOAT64: return go(~uint64_t{0} >> 1);
    default: break;
  }
  throw plugin::Failure(LOOM_STATUS_UNSUPPORTED,
                        std::string(LOOM_GPU_NAME " ") + name + ": dtype " + plugin::dtype_name(in.dtype) + " is not supported");
}

void all(const LoomKernelCall& c) { logical<true>(c, "all"); }
void any(const LoomKernelCall& c) { logical<false>(c, "any"); }

}  // namespace

// Masks are the CPU plugin's: ops "as sum" (and the scans, whose dtype
// argument can ask for any dtype), the value/index and logical ops take
// every dtype; the statistics and mean floating dtypes only.
void register_reduce_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("sum", LOOM_GPU_NAME, kernel<sum>, kAllMask);
  r.kernel("mean", LOOM_GPU_NAME, kernel<mean>, kFloatingMask);
  r.kernel("prod", LOOM_GPU_NAME, kernel<prod>, kAllMask);
  r.kernel("amax", LOOM_GPU_NAME, kernel<amax>, kAllMask);
  r.kernel("amin", LOOM_GPU_NAME, kernel<amin>, kAllMask);
  r.kernel("max.dim", LOOM_GPU_NAME, kernel<max_dim>, kAllMask);
  r.kernel("min.dim", LOOM_GPU_NAME, kernel<min_dim>, kAllMask);
  r.kernel("argmax", LOOM_GPU_NAME, kernel<argmax>, kAllMask);
  r.kernel("argmin", LOOM_GPU_NAME, kernel<argmin>, kAllMask);
  r.kernel("var", LOOM_GPU_NAME, kernel<var>, kFloatingMask);
  r.kernel("std", LOOM_GPU_NAME, kernel<stddev>, kFloatingMask);
  r.kernel("norm", LOOM_GPU_NAME, kernel<norm>, kFloatingMask);
  r.kernel("logsumexp", LOOM_GPU_NAME, kernel<logsumexp>, kFloatingMask);
  r.kernel("all", LOOM_GPU_NAME, kernel<all>, kAllMask);
  r.kernel("any", LOOM_GPU_NAME, kernel<any>, kAllMask);
  r.kernel("cumsum", LOOM_GPU_NAME, kernel<cumsum>, kAllMask);
  r.kernel("cumprod", LOOM_GPU_NAME, kernel<cumprod>, kAllMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
