// The CUDA device type's fused_* slots (plugin_api.h, ABI 1.4): a region
// becomes CUDA C++ (fused_codegen.cpp), compiled at run time by NVRTC for
// the device's architecture into a CUBIN (cached by the region's hash and
// the architecture, once per process), loaded with the runtime's library
// API (cudaLibraryLoadData, CUDA 12+) and launched on the caller's stream.
// Without NVRTC, or for a region the generator does not write, the slot
// declines with the reason, and the region runs op by op.
#include "cuda_error.hpp"
#include "fused_codegen.hpp"
#include "fused_region.hpp"
#include "nvrtc_compiler.hpp"
#include "runtime.hpp"

#include "vendor/gpu_runtime.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using cuda_fusion::Params;
using plugin::Failure;
using plugin::guard;

struct Compiled {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  int device = 0;
  int32_t num_inputs = 0, num_outputs = 0;
};

// CUBINs by (region hash, architecture): a region compiles once per process
// whatever the number of graphs or devices of one architecture that run it.
std::string cached_cubin(const LoomFusedRegion& r, const std::string& source, int arch) {
  static std::mutex mutex;
  static std::map<std::pair<uint64_t, int>, std::string> cache;
  std::lock_guard lock(mutex);
  auto key = std::make_pair(r.hash, arch);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  std::string error;
  std::string cubin = cuda_fusion::compile_cubin(source, arch, error);
  if (cubin.empty()) {
    // NVRTC missing is a decline (the region still runs); a source NVRTC
    // rejects is this plugin's bug, reported with the log.
    if (!cuda_fusion::nvrtc_missing().empty())
      throw Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME ": " + error);
    throw Failure(LOOM_STATUS_INTERNAL, LOOM_GPU_NAME ": the generated region did not compile: " + error);
  }
  return cache.emplace(key, std::move(cubin)).first->second;
}

LoomError* fused_compile(void*, int32_t index, const LoomFusedRegion* region, void** out_kernel) {
  return guard([&] {
    check_index(index);
    const cuda_fusion::FusedSource src = cuda_fusion::generate(*region);
    if (!src.declined.empty()) throw Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME ": declines " + src.declined);
    use_device(index);
    int major = 0, minor = 0;
    check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index), index, "cudaDeviceGetAttribute");
    check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, index), index, "cudaDeviceGetAttribute");
    const std::string cubin = cached_cubin(*region, src.code, major * 10 + minor);
    auto c = std::make_unique<Compiled>();
    c->device = index;
    c->num_inputs = region->num_inputs;
    c->num_outputs = region->num_outputs;
    check(cudaLibraryLoadData(&c->library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), index,
          "cudaLibraryLoadData (a fused region)");
    check(cudaLibraryGetKernel(&c->kernel, c->library, "loom_fused"), index, "cudaLibraryGetKernel (loom_fused)");
    *out_kernel = c.release();
  });
}

// The iteration space with dimensions of size 1 dropped and neighbours
// merged where every input (and the contiguous output) steps through them
// as one: a [64, 768] bias add becomes 2-d, a contiguous one 1-d.
void plan(Params& p, const LoomTensorDesc& out, const LoomTensorDesc* in, int32_t n_in) {
  int64_t shape[64];
  int64_t strides[cuda_fusion::kMaxInputs][64];
  int nd = 0;
  for (int32_t d = 0; d < out.ndim; ++d) {
    if (out.shape[d] == 1) continue;
    shape[nd] = out.shape[d];
    for (int32_t k = 0; k < n_in; ++k) strides[k][nd] = in[k].strides[d];
    ++nd;
  }
  // Merge d into d-1 (inner into outer) where strides[d-1] == strides[d] * shape[d] for all.
  int m = 0;
  for (int d = 0; d < nd; ++d) {
    bool merge = m > 0;
    for (int32_t k = 0; k < n_in && merge; ++k) merge = strides[k][m - 1] == strides[k][d] * shape[d];
    if (merge) {
      shape[m - 1] *= shape[d];
      for (int32_t k = 0; k < n_in; ++k) strides[k][m - 1] = strides[k][d];
      continue;
    }
    shape[m] = shape[d];
    for (int32_t k = 0; k < n_in; ++k) strides[k][m] = strides[k][d];
    ++m;
  }
  if (m > cuda_fusion::kMaxDims)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME ": a fused region over " + std::to_string(m) +
                                                    " dimensions that do not merge (at most " +
                                                    std::to_string(cuda_fusion::kMaxDims) + ")");
  p.ndim = m;
  p.contiguous = 1;
  for (int d = 0; d < m; ++d) p.shape[d] = shape[d];
  for (int32_t k = 0; k < n_in; ++k) {
    bool scalar = true, dense = true;
    int64_t expect = 1;
    for (int d = m - 1; d >= 0; --d) {
      p.strides[k][d] = strides[k][d];
      scalar = scalar && strides[k][d] == 0;
      dense = dense && strides[k][d] == expect;
      expect *= shape[d];
    }
    p.scalar[k] = scalar ? 1 : 0;
    if (!scalar && !dense) p.contiguous = 0;
  }
}

LoomError* fused_run(void*, int32_t index, void* kernel, const LoomTensorDesc* inputs, int32_t num_inputs,
                     const LoomTensorDesc* outputs, int32_t num_outputs, void* stream) {
  return guard([&] {
    const Compiled& c = *static_cast<const Compiled*>(kernel);
    if (num_inputs != c.num_inputs || num_outputs != c.num_outputs)
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT, LOOM_GPU_NAME ": fused region expects " +
                                                      std::to_string(c.num_inputs) + " inputs and " +
                                                      std::to_string(c.num_outputs) + " outputs");
    Params p{};
    p.n = plugin::numel(outputs[0]);
    if (p.n == 0) return;
    plan(p, outputs[0], inputs, num_inputs);
    for (int32_t k = 0; k < num_inputs; ++k)
      p.in[k] = static_cast<const char*>(inputs[k].data) + inputs[k].byte_offset;
    for (int32_t k = 0; k < num_outputs; ++k) p.out[k] = static_cast<char*>(outputs[k].data) + outputs[k].byte_offset;
    use_device(index);
    constexpr int kBlock = 256;
    const int64_t blocks = std::min<int64_t>((p.n + kBlock - 1) / kBlock, int64_t{1} << 20);
    void* args[] = {&p};
    check(cudaLaunchKernel(reinterpret_cast<const void*>(c.kernel), dim3(static_cast<unsigned>(blocks)), dim3(kBlock),
                           args, 0, static_cast<cudaStream_t>(stream)),
          index, "cudaLaunchKernel (a fused region)");
  });
}

void fused_release(void*, void* kernel) {
  auto* c = static_cast<Compiled*>(kernel);
  if (c->library) (void)cudaLibraryUnload(c->library);
  delete c;
}

}  // namespace

void fill_fused_slots(LoomDeviceTypeDesc& d) {
  d.fused_compile = &fused_compile;
  d.fused_run = &fused_run;
  d.fused_release = &fused_release;
}

}  // namespace loom::LOOM_GPU_NAMESPACE
