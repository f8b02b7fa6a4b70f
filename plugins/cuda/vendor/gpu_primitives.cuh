// Device-wide scans and sorts for the kernels: CUB on CUDA, rocPRIM on HIP
// (both header-only; Debian packages rocPRIM, not hipCUB). One signature per
// primitive, in CUB's two-call style: called with `temp` null it only sets
// `temp_bytes`; called again with that much scratch it queues the work on
// `stream`. Part of the vendor layer (gpu_runtime.hpp): the kernels call
// these and never the vendor library.
#pragma once

#include "gpu_runtime.hpp"

#include <cstddef>

#if !defined(LOOM_GPU_HIP)
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#else
#include <iostream>  // rocPRIM 5.3 prints debug output without including it
#include <rocprim/device/device_scan.hpp>
#include <rocprim/device/device_segmented_radix_sort.hpp>
#endif

namespace loom::LOOM_GPU_NAMESPACE::primitives {

// out[i] = in[0] + ... + in[i - 1] (out[0] = 0); `out` may be `in`.
template <class T>
cudaError_t exclusive_sum(void* temp, size_t& temp_bytes, const T* in, T* out, int64_t count, cudaStream_t stream) {
#if !defined(LOOM_GPU_HIP)
  return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, count, stream);
#else
  return rocprim::exclusive_scan(temp, temp_bytes, in, out, T(0), static_cast<size_t>(count), rocprim::plus<T>(),
                                 stream);
#endif
}

// Sorts (key, value) pairs by the key bits [0, end_bit) within each segment
// [offsets[s], offsets[s + 1]), stable, ascending or descending.
template <class K, class V>
cudaError_t segmented_sort_pairs(bool descending, void* temp, size_t& temp_bytes, const K* keys, K* sorted_keys,
                                 const V* values, V* sorted_values, int items, int segments, const int* offsets,
                                 int end_bit, cudaStream_t stream) {
#if !defined(LOOM_GPU_HIP)
  using Sort = cub::DeviceSegmentedRadixSort;
  return descending ? Sort::SortPairsDescending(temp, temp_bytes, keys, sorted_keys, values, sorted_values, items,
                                                segments, offsets, offsets + 1, 0, end_bit, stream)
                    : Sort::SortPairs(temp, temp_bytes, keys, sorted_keys, values, sorted_values, items, segments,
                                      offsets, offsets + 1, 0, end_bit, stream);
#else
  const auto n = static_cast<unsigned int>(items), segs = static_cast<unsigned int>(segments);
  const auto bits = static_cast<unsigned int>(end_bit);
  return descending ? rocprim::segmented_radix_sort_pairs_desc(temp, temp_bytes, keys, sorted_keys, values,
                                                               sorted_values, n, segs, offsets, offsets + 1, 0u, bits,
                                                               stream)
                    : rocprim::segmented_radix_sort_pairs(temp, temp_bytes, keys, sorted_keys, values, sorted_values,
                                                          n, segs, offsets, offsets + 1, 0u, bits, stream);
#endif
}

}  // namespace loom::LOOM_GPU_NAMESPACE::primitives
