// out_of_memory.hpp — the error a failed device allocation raises.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace loom::gpu {

// "512 B", "1.00 KiB", "1.50 MiB", "2.00 GiB": whole bytes below 1 KiB,
// otherwise the largest binary unit (up to GiB) with two decimals.
std::string format_bytes(size_t bytes);

// Thrown when neither the cache nor the device (after the cache was
// returned to it) can serve a request. The message states the four sizes a
// user needs to tell fragmentation, a leak and a too-big model apart:
//   "CUDA out of memory on device 0: tried to allocate 2.00 GiB; the device
//    has 1.50 GiB free of 80.00 GiB; loom holds 3.20 GiB reserved, of which
//    1.10 GiB allocated to tensors"
// The exact byte counts are fields as well. `runtime` names the GPU
// runtime the message starts with ("CUDA"; "HIP" in the HIP plugin, which
// shares this library).
class OutOfMemory : public std::runtime_error {
 public:
  OutOfMemory(int device_index, size_t requested, size_t device_free,
              size_t device_total, size_t reserved, size_t allocated,
              const char* runtime = "CUDA");

  const int device_index;
  const size_t requested;     // bytes the caller asked for
  const size_t device_free;   // as the device reported at the failure
  const size_t device_total;
  const size_t reserved;      // held by this allocator (allocated + cached)
  const size_t allocated;     // of those, handed out to tensors
};

}  // namespace loom::gpu
