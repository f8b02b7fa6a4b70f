// safetensors_fuzzer.cpp — libFuzzer target for the safetensors reader
// (frontend_cpp/src/io/parse.cpp: io::parse_safetensors on a file's bytes,
// the same call io::load and io::load_buffer make before touching data).
//
// Files come from anywhere. Every input must give a header or loom::Error;
// a header it accepts must be safe for the loader to act on: every tensor's
// bytes inside the buffer, tiling it exactly, sized by dtype and shape, and
// a shape whose contiguous strides fit in int64.
#include <loom/io.h>

#include "fuzz_check.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  loom::io::Header header;
  try {
    header = loom::io::parse_safetensors(data, size, "<fuzz>");
  } catch (const loom::Error& e) {
    LOOM_FUZZ_CHECK(std::string_view(e.what()).rfind("<fuzz>: ", 0) == 0);
    return 0;
  }
  LOOM_FUZZ_CHECK(header.data_start >= 8 && header.data_start <= size);
  const uint64_t buffer_len = size - header.data_start;
  uint64_t covered = 0;
  for (const loom::io::TensorEntry& e : header.entries) {
    LOOM_FUZZ_CHECK(e.begin <= e.end && e.end <= buffer_len);
    // What the loader computes: the contiguous strides, then the byte count.
    uint64_t stride = 1, numel = 1;
    for (int64_t d : e.shape) {
      LOOM_FUZZ_CHECK(d >= 0);
      const uint64_t extent = static_cast<uint64_t>(std::max<int64_t>(d, 1));
      LOOM_FUZZ_CHECK(!__builtin_mul_overflow(stride, extent, &stride));
      LOOM_FUZZ_CHECK(stride <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
      numel *= static_cast<uint64_t>(d);  // <= stride: cannot overflow
    }
    LOOM_FUZZ_CHECK(e.end - e.begin == numel * loom::itemsize(e.dtype));
    LOOM_FUZZ_CHECK(loom::io::dtype_from_safetensors_name(loom::io::safetensors_dtype_name(e.dtype)) == e.dtype);
    covered += e.end - e.begin;
  }
  LOOM_FUZZ_CHECK(covered == buffer_len);
  return 0;
}
