// How kernels/batch_norm_cudnn.cu maps batch_norm and _batch_norm_backward
// onto cuDNN's spatial batch normalisation, and when it declines (the core
// then runs the op's composite). Plain host code over the ABI's
// descriptors, tested without cuDNN or a GPU (tests/batch_norm_plan_test.cu).
#pragma once

#include "vendor/gpu_target.hpp"

#include <loom/plugin_api.h>

#include <climits>
#include <cstdint>

namespace loom::LOOM_GPU_NAMESPACE::bn {

// A contiguous input [N, C, *] as cuDNN's 4-D or 5-D NCHW tensor: spatial
// batch normalisation reduces over every dim but C, so any split of the
// spatial elements serves. [N, C] -> [N, C, 1, 1], [N, C, L] -> [N, C, L, 1],
// 4-D and 5-D as they are; past 5-D the trailing spatial dims merge.
struct Problem {
  int64_t N = 0, C = 0;
  int64_t S = 1;        // spatial elements per (sample, channel)
  int nb_dims = 4;      // 4 or 5
  int64_t dims[5] = {};
  int64_t strides[5] = {};  // packed
  int64_t numel() const { return N * C * S; }
};

inline Problem problem_of(int32_t ndim, const int64_t* shape) {
  Problem p;
  p.N = shape[0];
  p.C = shape[1];
  p.nb_dims = ndim <= 4 ? 4 : 5;
  for (int d = 0; d < 5; ++d) p.dims[d] = 1;
  for (int32_t d = 0; d < ndim; ++d) {
    p.dims[d < p.nb_dims ? d : p.nb_dims - 1] *= shape[d];
    if (d >= 2) p.S *= shape[d];
  }
  int64_t stride = 1;
  for (int d = p.nb_dims - 1; d >= 0; --d) {
    p.strides[d] = stride;
    stride *= p.dims[d];
  }
  return p;
}

// Why cuDNN cannot run `p` (nullptr when it can). eps below cuDNN's minimum
// (`min_eps`, CUDNN_BN_MIN_EPSILON) and sizes past its int descriptors are
// declined; so is training with one value per channel (the core rejects
// that for batch_norm; a direct _batch_norm_backward call may still ask).
// An empty problem is not declined: there is nothing to run.
inline const char* decline_reason(const Problem& p, double eps, double min_eps, bool training) {
  if (!(eps >= min_eps)) return "eps is below cuDNN's minimum";
  if (p.numel() > INT_MAX) return "more than 2^31 - 1 elements (cuDNN's descriptors take int)";
  if (training && p.numel() > 0 && p.N * p.S < 2) return "one value per channel";
  return nullptr;
}

// A per-channel operand (weight, bias, running statistics, their
// gradients) has any shape with C elements. cuDNN reads or writes it where
// it is when it has cuDNN's parameter type and plugin::is_contiguous holds
// (its C elements in order, one after another); otherwise it is staged
// through a dense buffer.

// Whether writing every element through the strides touches distinct
// memory: no stride 0 (a broadcast) over more than one element. (Other
// overlaps need as_strided, which the core cannot hand a kernel as an
// argument it writes.)
inline bool is_writable(const LoomTensorDesc& t) {
  for (int32_t d = 0; d < t.ndim; ++d)
    if (t.shape[d] > 1 && t.strides[d] == 0) return false;
  return true;
}

// Evaluation-mode backward (own kernels): each channel's M = N * S
// elements are cut into `per_channel` chunks of `chunk` elements, one
// block each, so a few channels still fill the GPU; a second pass adds each
// channel's partial sums in chunk order (deterministic).
struct Split {
  int64_t per_channel = 1;
  int64_t chunk = 0;
};

// `target_blocks`: about how many blocks fill the device; `min_chunk`: the
// fewest elements worth a block.
inline Split eval_backward_split(int64_t C, int64_t M, int64_t target_blocks, int64_t min_chunk) {
  Split s;
  if (C <= 0 || M <= 0) return s;
  int64_t want = (target_blocks + C - 1) / C;
  const int64_t most = (M + min_chunk - 1) / min_chunk;
  if (want > most) want = most;
  if (want < 1) want = 1;
  s.chunk = (M + want - 1) / want;
  s.per_channel = (M + s.chunk - 1) / s.chunk;  // no empty chunk at the end
  return s;
}

}  // namespace loom::LOOM_GPU_NAMESPACE::bn
