// The "cuda" device type: devices, memory through the caching allocator,
// copies, streams and events, properties, statistics and options. Every
// slot runs under plugin::guard, so a CUDA failure becomes a LoomError
// naming the device and the call; none of them throws across the ABI.
#include "cuda_error.hpp"
#include "device.hpp"
#ifdef LOOM_GPU_HAVE_FUSION
#include "fused_region.hpp"
#endif
#include "runtime.hpp"

#include "vendor/gpu_runtime.hpp"

#include <cstring>
#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::guard;

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }

int32_t count(void*) { return device_count(); }
const char* reason(void*) { return unavailable_reason(); }

// Blocks belong to the calling thread's current stream on that device: the
// allocator reuses them on that stream at once, elsewhere only after it.
LoomError* allocate(void*, int32_t index, size_t nbytes, void** out) {
  *out = nullptr;
  return guard([&] {
    try {
      *out = allocator(index).allocate(nbytes, current_stream(index));
    } catch (const gpu::OutOfMemory& e) {
      throw plugin::Failure(LOOM_STATUS_OUT_OF_MEMORY, e.what());
    }
  });
}

void deallocate(void*, int32_t index, void* ptr, size_t) {
  if (ptr == nullptr) return;
  // deallocate cannot fail by contract; a CUDA error here (a dead context at
  // exit) leaves the block to the driver's teardown.
  (void)guard([&] { allocator(index).free(ptr); });
}

// Whether `host` lies in a live block of the pinned pool; if so, the copy
// just queued on `stream` is recorded on it, so that the block is not handed
// out again before the copy is done (ABI 1.3 copy contract).
bool record_pinned_use(const void* host, int32_t index, void* stream) {
  return device_count() > 0 && pinned_pool().record_use(host, index, stream);
}

// Device to host: into pageable memory the copy is complete on return (the
// host reads the bytes next); into pinned memory it stays queued on the
// stream, and loom waits for it unless the user asked for non_blocking.
LoomError* copy_to_host(void*, int32_t index, void* dst, const void* src, size_t n, void* stream) {
  return guard([&] {
    if (n == 0) return;
    use_device(index);
    check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, as_stream(stream)), index,
          "cudaMemcpyAsync (device to host)");
    if (record_pinned_use(dst, index, stream)) return;
    check(cudaStreamSynchronize(as_stream(stream)), index, "cudaStreamSynchronize (device to host)");
  });
}

// Host to device: from pageable memory it returns once the source may be
// reused (CUDA stages it before returning); from pinned memory the DMA reads
// the source later, so the block is kept from reuse until it has.
LoomError* copy_from_host(void*, int32_t index, void* dst, const void* src, size_t n, void* stream) {
  return guard([&] {
    if (n == 0) return;
    use_device(index);
    check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, as_stream(stream)), index,
          "cudaMemcpyAsync (host to device)");
    (void)record_pinned_use(src, index, stream);
  });
}

LoomError* host_allocate(void*, size_t nbytes, void** out) {
  *out = nullptr;
  return guard([&] {
    try {
      *out = pinned_pool().allocate(nbytes);
    } catch (const gpu::PinnedOutOfMemory& e) {
      throw plugin::Failure(LOOM_STATUS_OUT_OF_MEMORY, e.what());
    }
  });
}

void host_deallocate(void*, void* ptr, size_t) {
  (void)guard([&] { pinned_pool().free(ptr); });
}

LoomError* copy_on_device(void*, int32_t dst_index, void* dst, int32_t src_index, const void* src, size_t n,
                          void* stream) {
  return guard([&] {
    if (n == 0) return;
    use_device(dst_index);
    if (dst_index == src_index)
      check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, as_stream(stream)), dst_index,
            "cudaMemcpyAsync (device to device)");
    else
      check(cudaMemcpyPeerAsync(dst, dst_index, src, src_index, n, as_stream(stream)), dst_index,
            ("cudaMemcpyPeerAsync (from cuda:" + std::to_string(src_index) + ")").c_str());
  });
}

LoomError* synchronize(void*, int32_t index) {
  return guard([&] {
    use_device(index);
    check(cudaDeviceSynchronize(), index, "cudaDeviceSynchronize");
  });
}

// Streams do not wait for the legacy default stream (PyTorch's choice too):
// ordering against it is the user's, through events or synchronize.
LoomError* stream_create(void*, int32_t index, void** out) {
  *out = nullptr;
  return guard([&] {
    use_device(index);
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), index, "cudaStreamCreate");
    *out = s;
  });
}

void stream_destroy(void*, int32_t index, void* stream) {
  (void)guard([&] {
    use_device(index);
    if (current_stream(index) == as_stream(stream)) set_current_stream(index, nullptr);
    check(cudaStreamDestroy(as_stream(stream)), index, "cudaStreamDestroy");
  });
}

LoomError* stream_synchronize(void*, int32_t index, void* stream) {
  return guard([&] {
    use_device(index);
    check(cudaStreamSynchronize(as_stream(stream)), index, "cudaStreamSynchronize");
  });
}

LoomError* event_create(void*, int32_t index, void** out) {
  *out = nullptr;
  return guard([&] {
    use_device(index);
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), index, "cudaEventCreate");
    *out = e;
  });
}

void event_destroy(void*, int32_t index, void* event) {
  (void)guard([&] { check(cudaEventDestroy(as_event(event)), index, "cudaEventDestroy"); });
}

LoomError* event_record(void*, int32_t index, void* event, void* stream) {
  return guard([&] {
    use_device(index);
    check(cudaEventRecord(as_event(event), as_stream(stream)), index, "cudaEventRecord");
  });
}

LoomError* stream_wait_event(void*, int32_t index, void* stream, void* event) {
  return guard([&] {
    use_device(index);
    check(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0), index, "cudaStreamWaitEvent");
  });
}

// cudaErrorNotReady is the "not yet" answer of both queries, not a failure.
bool query_result(cudaError_t e, int32_t index, const char* what) {
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  check(e, index, what);
  return true;
}

LoomError* stream_query(void*, int32_t index, void* stream, int32_t* out_done) {
  return guard([&] {
    use_device(index);
    *out_done = query_result(cudaStreamQuery(as_stream(stream)), index, "cudaStreamQuery");
  });
}

LoomError* event_query(void*, int32_t index, void* event, int32_t* out_done) {
  return guard([&] { *out_done = query_result(cudaEventQuery(as_event(event)), index, "cudaEventQuery"); });
}

LoomError* event_synchronize(void*, int32_t index, void* event) {
  return guard([&] { check(cudaEventSynchronize(as_event(event)), index, "cudaEventSynchronize"); });
}

LoomError* event_elapsed_ms(void*, int32_t index, void* start, void* end, float* out) {
  return guard([&] { check(cudaEventElapsedTime(out, as_event(start), as_event(end)), index, "cudaEventElapsedTime"); });
}

LoomError* properties(void*, int32_t index, LoomDeviceProperties* out) {
  return guard([&] {
    check_index(index);
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, index), index, "cudaGetDeviceProperties");
    if (LOOM_STRUCT_HAS(out, LoomDeviceProperties, name)) {
      std::strncpy(out->name, p.name, sizeof out->name - 1);
      out->name[sizeof out->name - 1] = '\0';
    }
    if (LOOM_STRUCT_HAS(out, LoomDeviceProperties, total_memory)) out->total_memory = p.totalGlobalMem;
    if (LOOM_STRUCT_HAS(out, LoomDeviceProperties, capability_minor)) {
      out->capability_major = p.major;
      out->capability_minor = p.minor;
    }
    if (LOOM_STRUCT_HAS(out, LoomDeviceProperties, multiprocessor_count))
      out->multiprocessor_count = p.multiProcessorCount;
  });
}

LoomError* memory_stats(void*, int32_t index, LoomMemoryStats* out) {
  return guard([&] { gpu::fill_memory_stats(allocator(index).stats(), out); });
}

LoomError* empty_cache(void*, int32_t index) {
  return guard([&] { allocator(index).empty_cache(); });
}

LoomError* reset_peak(void*, int32_t index) {
  return guard([&] { allocator(index).reset_peak(); });
}

LoomError* set_stream(void*, int32_t index, void* stream) {
  return guard([&] {
    check_index(index);
    set_current_stream(index, as_stream(stream));
  });
}

AttentionKernels parse_attention_kernels(const std::string& v) {
  if (v == "auto") return AttentionKernels::Auto;
  if (v == "always") return AttentionKernels::Always;
  if (v == "never") return AttentionKernels::Never;
  throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT,
                        LOOM_GPU_NAME ": option 'attention_kernels' takes auto, always or never, got '" + v + "'");
}

// Options: allow_tf32 takes "1"/"0" (also "true"/"false"); attention_kernels
// takes "auto", "always" or "never".
LoomError* set_option(void*, const char* key, const char* value) {
  return guard([&] {
    const std::string k = key ? key : "", v = value ? value : "";
    if (k == "attention_kernels") {
      options().attention_kernels.store(parse_attention_kernels(v));
      return;
    }
    const bool on = v == "1" || v == "true", off = v == "0" || v == "false";
    if (k != "allow_tf32")
      throw plugin::Failure(LOOM_STATUS_NOT_FOUND,
                            LOOM_GPU_NAME ": unknown option '" + k + "' (known: allow_tf32, attention_kernels)");
    if (!on && !off)
      throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT,
                            LOOM_GPU_NAME ": option '" + k + "' takes 1/0 or true/false, got '" + v + "'");
    options().allow_tf32.store(on);
  });
}

LoomDeviceTypeDesc make_desc() {
  LoomDeviceTypeDesc d{};
  d.struct_size = sizeof d;
  d.name = LOOM_GPU_NAME;
  d.device_count = &count;
  d.unavailable_reason = &reason;
  d.allocate = &allocate;
  d.deallocate = &deallocate;
  d.copy_to_host = &copy_to_host;
  d.copy_from_host = &copy_from_host;
  d.copy_on_device = &copy_on_device;
  d.synchronize = &synchronize;
  d.stream_create = &stream_create;
  d.stream_destroy = &stream_destroy;
  d.stream_synchronize = &stream_synchronize;
  d.event_create = &event_create;
  d.event_destroy = &event_destroy;
  d.event_record = &event_record;
  d.event_synchronize = &event_synchronize;
  d.event_elapsed_ms = &event_elapsed_ms;
  d.device_properties = &properties;
  d.memory_stats = &memory_stats;
  d.empty_cache = &empty_cache;
  d.reset_peak_memory_stats = &reset_peak;
  d.set_current_stream = &set_stream;
  d.set_option = &set_option;
  d.host_allocate = &host_allocate;
  d.host_deallocate = &host_deallocate;
  d.stream_wait_event = &stream_wait_event;
  d.stream_query = &stream_query;
  d.event_query = &event_query;
#ifdef LOOM_GPU_HAVE_FUSION
  fill_fused_slots(d);
#endif
  return d;
}

}  // namespace

const LoomDeviceTypeDesc& device_type_desc() {
  static const LoomDeviceTypeDesc desc = make_desc();
  return desc;
}

}  // namespace loom::LOOM_GPU_NAMESPACE
