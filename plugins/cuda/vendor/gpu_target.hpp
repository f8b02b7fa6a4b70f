// What a source needs to know about the build it is part of, without the
// vendor's runtime headers (so plain C++ files compiled by the host
// compiler can include it):
//   LOOM_GPU_NAME  the device type this build registers, as a string
//                  literal so messages concatenate it: "cuda", or "hip"
//                  when plugins/hip builds these sources (LOOM_GPU_HIP);
//   LOOM_GPU_NAMESPACE  the plugin's namespace under loom: cuda, or hip
//                  (DESIGN.md's map), so a backtrace or `nm` of either
//                  library names the plugin it came from;
//   LOOM_HD        marks a helper that both host and device code call.
//                  nvcc lets device code call constexpr host functions
//                  (--expt-relaxed-constexpr), clang (hipcc) does not.
#pragma once

#if defined(LOOM_GPU_HIP)
#define LOOM_GPU_NAME "hip"
#define LOOM_GPU_NAMESPACE hip
#else
#define LOOM_GPU_NAME "cuda"
#define LOOM_GPU_NAMESPACE cuda
#endif

#if defined(__CUDACC__) || defined(__HIP__)
#define LOOM_HD __host__ __device__
#else
#define LOOM_HD
#endif
