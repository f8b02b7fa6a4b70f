// loom/plugin/host_device.hpp — LOOM_HD marks a function callable from host
// and device code. Under nvcc or hipcc it is `__host__ __device__`; in a
// plain C++ compiler it is empty, so the same header serves a CPU plugin, a
// GPU plugin's host code and its kernels.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define LOOM_HD __host__ __device__
#else
#define LOOM_HD
#endif
