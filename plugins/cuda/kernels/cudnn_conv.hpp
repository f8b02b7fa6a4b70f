// The cuDNN side of the convolutions (kernels/conv_cudnn.cu): descriptor
// ownership, filling descriptors from loom's sizes and strides, and the
// algorithm choice (cuDNN's heuristics, cached per problem).
#pragma once

#include "conv_plan.hpp"
#include "cudnn_handle.hpp"
#include "vendor/gpu_target.hpp"

#include <cudnn.h>

#include <memory>

namespace loom::LOOM_GPU_NAMESPACE {

using FilterDescriptor =
    CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;

// The descriptors of one convolution call: x, w, y as in conv::Problem.
struct ConvDescriptors {
  TensorDescriptor x, y;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
  explicit ConvDescriptors(int index);
};

// A strided 4-D tensor descriptor (size-1 dims' strides tidied; every size
// and stride fits int: conv::decline_reason checked).
void set_tensor(const TensorDescriptor& d, const conv::Dims4& t, cudnnDataType_t type, int index);
// A packed filter descriptor in `layout` (NCHW or NHWC).
void set_filter(const FilterDescriptor& d, const conv::Dims4& t, conv::FilterLayout layout, cudnnDataType_t type,
                int index);

// What the heuristics chose for one problem: the algorithm of the problem's
// pass, the math type to run it with and its workspace in bytes.
struct ConvAlgorithm {
  int algo;
  cudnnMathType_t math;
  size_t workspace;
};

// The algorithm for `p` (whose descriptors `d` are set, the convolution's
// math type `wanted`), from the process-wide cache or the heuristics: the
// first result that keeps to `wanted` (no tensor-op kernels for FMA-only
// float32). LOOM_STATUS_UNSUPPORTED when no algorithm qualifies. Leaves
// d.conv's math type unspecified: set the returned one before running.
std::shared_ptr<const ConvAlgorithm> conv_algorithm(const ConvDescriptors& d, cudnnHandle_t h,
                                                    const conv::Problem& p, cudnnMathType_t wanted, int index,
                                                    const char* op);

}  // namespace loom::LOOM_GPU_NAMESPACE
