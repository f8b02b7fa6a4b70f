// A small LRU of oneDNN primitives keyed by a vector of integers (dtype,
// dims, strides, parameters), shared by the convolution and pooling paths.
// Building a primitive (primitive_desc + JIT) costs far more than running a
// small one, and models call with the same few shapes over and over. A key
// also remembers failure ("oneDNN has nothing good here"), so the check runs
// once per shape. Same design as matmul_onednn.cpp's cache.
#pragma once

#include <loom/plugin/lru_cache.hpp>
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace loom::cpu::onednn {

// The engine is leaked on purpose: destroying oneDNN objects from static
// destructors at exit races oneDNN's own teardown.
inline const dnnl::engine& engine() {
  static const dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

// While alive, oneDNN calls from this thread see one OpenMP thread when
// `work` < `threshold`. oneDNN spreads even tiny GEMMs and convolutions over
// every thread; below ~100 us of work the team's wake-up (and, on a busy
// machine, its barrier waiting for a descheduled worker) costs more than
// the arithmetic. omp_set_num_threads changes only this thread's setting;
// the destructor restores it. Callers hold it across both building and
// running a cached primitive (oneDNN may size its work split when built);
// the decision depends only on the shape, which is in the cache key.
class SerialBelow {
 public:
  SerialBelow(int64_t work, int64_t threshold) : saved_(work < threshold ? omp_get_max_threads() : 0) {
    if (saved_ > 1) omp_set_num_threads(1);
  }
  ~SerialBelow() {
    if (saved_ > 1) omp_set_num_threads(saved_);
  }
  SerialBelow(const SerialBelow&) = delete;
  SerialBelow& operator=(const SerialBelow&) = delete;

 private:
  int saved_;
};

// One in-order stream per thread: streams are not shared between threads.
inline dnnl::stream& thread_stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

// Primitives are planned once per problem shape: loom's shared LRU cache.
template <class Entry>
using Cache = plugin::LruCache<Entry>;

// A per-thread, 64-byte aligned buffer that only grows: reordered operands
// are tens of MB, and fresh allocations that size cost page faults per call.
class ScratchBuffer {
 public:
  void* get(size_t bytes) {
    if (bytes > size_) {
      data_.reset(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
      size_ = data_ ? bytes : 0;
      if (!data_) throw std::bad_alloc();
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

// dims/strides for a memory::desc: size-1 dims get the dense stride oneDNN's
// layout checks expect (their stride never matters to the data).
inline void tidy_strides(const dnnl::memory::dims& dims, dnnl::memory::dims& strides) {
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] != 1) continue;
    int64_t extent = 1;
    for (size_t j = i + 1; j < dims.size(); ++j) extent = std::max(extent, strides[j] * dims[j]);
    strides[i] = extent;
  }
}

}  // namespace loom::cpu::onednn
