// loom/cuda.h — libtorch's torch::cuda names over loom's device runtime, for
// the device type "cuda" (the CUDA plugin). Without that plugin, or on a
// machine without a GPU, is_available() is false and device_count() 0;
// everything else then throws naming the missing device.
//
//   if (loom::cuda::is_available()) {
//     loom::cuda::synchronize();
//     std::cout << loom::cuda::memory_allocated() << " bytes in tensors\n";
//   }
#pragma once

#include <loom/device_info.h>
#include <loom/stream.h>

#include <cstdint>
#include <string>

namespace loom::cuda {

inline int device_count() { return available_device_count("cuda"); }
inline bool is_available() { return device_count() > 0; }

// "cuda:<index>"; throws when there is no such device.
inline Device device(int index = 0) { return Device("cuda:" + std::to_string(index)); }

inline void synchronize(int index = 0) { loom::synchronize(device(index)); }
inline DeviceProperties get_device_properties(int index = 0) {
  return device_properties(device(index));
}
inline std::string get_device_name(int index = 0) { return get_device_properties(index).name; }

inline Stream current_stream(int index = 0) { return loom::current_stream(device(index)); }
inline Stream default_stream(int index = 0) { return Stream::default_stream(device(index)); }

inline uint64_t memory_allocated(int index = 0) { return memory_stats(device(index)).allocated_bytes; }
inline uint64_t max_memory_allocated(int index = 0) {
  return memory_stats(device(index)).max_allocated_bytes;
}
inline uint64_t memory_reserved(int index = 0) { return memory_stats(device(index)).reserved_bytes; }
inline uint64_t max_memory_reserved(int index = 0) {
  return memory_stats(device(index)).max_reserved_bytes;
}
inline void empty_cache(int index = 0) { loom::empty_cache(device(index)); }
inline void reset_peak_memory_stats(int index = 0) { loom::reset_peak_memory_stats(device(index)); }

// torch.backends.cuda.matmul.allow_tf32: float32 matmuls may use TF32.
inline void set_allow_tf32(bool allow) { set_device_option("cuda", "allow_tf32", allow ? "1" : "0"); }

}  // namespace loom::cuda
