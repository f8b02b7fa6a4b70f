// loom/library.h — defining ops and registering kernels from C++, the three
// verbs def, impl and fallback (PyTorch's torch/library.h):
//
//   LOOM_LIBRARY(myops, m) {
//     m.def("myops_scale(Tensor self, float factor=1.0) -> Tensor");
//     m.impl("myops_scale", "cpu", my_scale_kernel);          // a LoomKernelFn
//     m.impl("myops_scale", "cpu", [](const LoomKernelCall& c) { ... });
//     m.fallback("mydev", my_boxed_fallback);
//   }
//
// and the fallback policy and counters (LOOM_FALLBACK=allow|warn|error). A
// registration remembers its file:line for error messages. From a plugin,
// the same verbs are LoomHostApi's op_def, kernel_register and
// fallback_register (loom/plugin_api.h). The catalog itself:
// loom/op_registry.h.
#pragma once

#include <loom/plugin_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace loom {

struct KernelEntry;  // loom/op_registry.h

// Options of an impl registered from C++.
struct KernelOptions {
  uint64_t dtypes = 0;  // LOOM_DTYPE_BIT mask; 0 = all
  uint32_t flags = 0;   // LOOM_KERNEL_*
};

// A C++ kernel: may throw; wrapped into a LoomKernelFn by the Library.
using CppKernel = std::function<void(const LoomKernelCall&)>;

// The registration block behind LOOM_LIBRARY.
class Library {
 public:
  Library(std::string name, const char* file, int line);
  Library& def(const std::string& schema, LoomInferFn infer = nullptr, void* infer_data = nullptr);
  Library& impl(const std::string& op, const std::string& device_type, LoomKernelFn fn,
                KernelOptions options = {});
  Library& impl(const std::string& op, const std::string& device_type, CppKernel kernel,
                KernelOptions options = {});
  Library& fallback(const std::string& device_type, LoomKernelFn fn);

 private:
  KernelEntry entry(LoomKernelFn fn, void* data, KernelOptions options) const;
  std::string name_;
  std::string where_;
};

namespace detail {
struct LibraryRegistrar {
  LibraryRegistrar(const char* name, void (*init)(Library&), const char* file, int line);
};
}  // namespace detail

// ---- fallback policy and counters -----------------------------------------

enum class FallbackPolicy { Allow, Warn, Error };
// From LOOM_FALLBACK (allow|warn|error; default allow), unless set.
FallbackPolicy fallback_policy();
void set_fallback_policy(FallbackPolicy p);

// How often `op` fell back on `device_type`.
uint64_t fallback_count(const std::string& op, const std::string& device_type);
struct FallbackRecord {
  std::string op;
  std::string device_type;
  uint64_t count;
};
// Every (op, device type) with a non-zero count.
std::vector<FallbackRecord> fallback_counts();

}  // namespace loom

#define LOOM_LIBRARY_CONCAT_(a, b) a##b
#define LOOM_LIBRARY_CONCAT(a, b) LOOM_LIBRARY_CONCAT_(a, b)
// LOOM_LIBRARY(name, m) { m.def(...); m.impl(...); }
#define LOOM_LIBRARY(name, m)                                                       \
  static void LOOM_LIBRARY_CONCAT(loom_library_init_, name)(::loom::Library&);     \
  static const ::loom::detail::LibraryRegistrar LOOM_LIBRARY_CONCAT(               \
      loom_library_registrar_, name)(#name, &LOOM_LIBRARY_CONCAT(loom_library_init_, name), \
                                     __FILE__, __LINE__);                           \
  static void LOOM_LIBRARY_CONCAT(loom_library_init_, name)(::loom::Library & m)
