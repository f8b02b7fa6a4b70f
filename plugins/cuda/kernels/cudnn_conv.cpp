// See cudnn_conv.hpp.
#include "cudnn_conv.hpp"
#include "vendor/gpu_target.hpp"

#include <loom/plugin.hpp>

#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

conv::LruCache<ConvAlgorithm>& algorithm_cache() {
  static conv::LruCache<ConvAlgorithm> cache(256);
  return cache;
}

// The first heuristic result whose query succeeded and that keeps to
// `wanted`; `workspace_of(algo, &bytes)` asks its workspace with the math
// type set on `cd`.
template <class Perf, class WorkspaceQuery>
ConvAlgorithm pick(const Perf* results, int count, cudnnMathType_t wanted, cudnnConvolutionDescriptor_t cd, int index,
                   const char* op, WorkspaceQuery&& workspace_of) {
  for (int i = 0; i < count; ++i) {
    const Perf& r = results[i];
    if (r.status != CUDNN_STATUS_SUCCESS) continue;
    const bool tensor_ops = r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (wanted == CUDNN_FMA_MATH && tensor_ops) continue;
    // FMA-only float32 stays FMA-only; otherwise run with the math the
    // algorithm was rated with (tensor-op kernels need it set).
    const cudnnMathType_t math = wanted == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : r.mathType;
    check_cudnn(cudnnSetConvolutionMathType(cd, math), index, "cudnnSetConvolutionMathType");
    size_t bytes = 0;
    if (workspace_of(static_cast<int>(r.algo), &bytes) != CUDNN_STATUS_SUCCESS) continue;
    return {static_cast<int>(r.algo), math, bytes};
  }
  throw Failure(LOOM_STATUS_UNSUPPORTED,
                LOOM_GPU_NAME ":" + std::to_string(index) + " " + op + ": cuDNN has no algorithm for this problem");
}

ConvAlgorithm choose(const ConvDescriptors& d, cudnnHandle_t h, conv::Pass pass, cudnnMathType_t wanted, int index,
                     const char* op) {
  const cudnnConvolutionDescriptor_t cd = d.conv.get();
  if (pass == conv::Pass::Forward) {
    cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n = 0;
    check_cudnn(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), cd, d.y.get(),
                                                       CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, r),
                index, "cudnnGetConvolutionForwardAlgorithm_v7");
    return pick(r, n, wanted, cd, index, op, [&](int algo, size_t* bytes) {
      return cudnnGetConvolutionForwardWorkspaceSize(h, d.x.get(), d.w.get(), cd, d.y.get(),
                                                     static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes);
    });
  }
  if (pass == conv::Pass::BackwardData) {
    cudnnConvolutionBwdDataAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int n = 0;
    check_cudnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.y.get(), cd, d.x.get(),
                                                            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, r),
                index, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    return pick(r, n, wanted, cd, index, op, [&](int algo, size_t* bytes) {
      return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w.get(), d.y.get(), cd, d.x.get(),
                                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
    });
  }
  cudnnConvolutionBwdFilterAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  int n = 0;
  check_cudnn(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x.get(), d.y.get(), cd, d.w.get(),
                                                            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, r),
              index, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  return pick(r, n, wanted, cd, index, op, [&](int algo, size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x.get(), d.y.get(), cd, d.w.get(),
                                                          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
  });
}

}  // namespace

ConvDescriptors::ConvDescriptors(int index)
    : x(index, "cudnnCreateTensorDescriptor"), y(index, "cudnnCreateTensorDescriptor"),
      w(index, "cudnnCreateFilterDescriptor"), conv(index, "cudnnCreateConvolutionDescriptor") {}

void set_tensor(const TensorDescriptor& d, const conv::Dims4& t, cudnnDataType_t type, int index) {
  const conv::Dims4 s = conv::tidy(t);
  int n[4], st[4];
  for (int i = 0; i < 4; ++i) {
    n[i] = static_cast<int>(s.size[i]);
    st[i] = static_cast<int>(s.stride[i]);
  }
  check_cudnn(cudnnSetTensor4dDescriptorEx(d.get(), type, n[0], n[1], n[2], n[3], st[0], st[1], st[2], st[3]), index,
              "cudnnSetTensor4dDescriptorEx");
}

void set_filter(const FilterDescriptor& d, const conv::Dims4& t, conv::FilterLayout layout, cudnnDataType_t type,
                int index) {
  const cudnnTensorFormat_t format = layout == conv::FilterLayout::NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  check_cudnn(cudnnSetFilter4dDescriptor(d.get(), type, format, static_cast<int>(t.size[0]),
                                         static_cast<int>(t.size[1]), static_cast<int>(t.size[2]),
                                         static_cast<int>(t.size[3])),
              index, "cudnnSetFilter4dDescriptor");
}

std::shared_ptr<const ConvAlgorithm> conv_algorithm(const ConvDescriptors& d, cudnnHandle_t h,
                                                    const conv::Problem& p, cudnnMathType_t wanted, int index,
                                                    const char* op) {
  return algorithm_cache().get(conv::cache_key(p, index, static_cast<int>(wanted)),
                               [&] { return choose(d, h, p.pass, wanted, index, op); });
}

}  // namespace loom::LOOM_GPU_NAMESPACE
