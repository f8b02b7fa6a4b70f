// NVRTC through dlopen (nvrtc_compiler.hpp). The few entry points are
// declared here with NVRTC's C types (nvrtcResult is an int enum, a program
// an opaque pointer), so no toolkit header is needed either.
#include "nvrtc_compiler.hpp"

#include <dlfcn.h>

#include <memory>
#include <type_traits>
#include <mutex>
#include <vector>

namespace loom::cuda_fusion {
namespace {

using Program = void*;
struct Nvrtc {
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*log_size)(Program, size_t*) = nullptr;
  int (*log)(Program, char*) = nullptr;
  int (*cubin_size)(Program, size_t*) = nullptr;
  int (*cubin)(Program, char*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  const char* (*error_string)(int) = nullptr;
  std::string missing;
};

const Nvrtc& nvrtc() {
  static const Nvrtc api = [] {
    Nvrtc n;
    void* lib = nullptr;
    std::string tried;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
      lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
      tried += std::string(tried.empty() ? "" : ", ") + name;
    }
    if (!lib) {
      n.missing = "NVRTC is not installed (tried " + tried + ")";
      return n;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
      if (!fn && n.missing.empty()) n.missing = std::string("NVRTC lacks ") + name;
    };
    sym(n.create, "nvrtcCreateProgram");
    sym(n.compile, "nvrtcCompileProgram");
    sym(n.log_size, "nvrtcGetProgramLogSize");
    sym(n.log, "nvrtcGetProgramLog");
    sym(n.cubin_size, "nvrtcGetCUBINSize");
    sym(n.cubin, "nvrtcGetCUBIN");
    sym(n.destroy, "nvrtcDestroyProgram");
    sym(n.error_string, "nvrtcGetErrorString");
    return n;
  }();
  return api;
}

}  // namespace

const std::string& nvrtc_missing() { return nvrtc().missing; }

std::string compile_cubin(const std::string& source, int arch, std::string& error) {
  const Nvrtc& n = nvrtc();
  if (!n.missing.empty()) {
    error = n.missing;
    return {};
  }
  Program prog = nullptr;
  if (int s = n.create(&prog, source.c_str(), "loom_fused.cu", 0, nullptr, nullptr)) {
    error = std::string("nvrtcCreateProgram: ") + n.error_string(s);
    return {};
  }
  std::unique_ptr<Program, void (*)(Program*)> owner(&prog, [](Program* p) { nvrtc().destroy(p); });
  // No FMA contraction: a + alpha * b rounds twice, as the node-by-node
  // kernels do.
  const std::string gpu = "--gpu-architecture=sm_" + std::to_string(arch);
  const char* options[] = {gpu.c_str(), "--std=c++17", "--fmad=false", "-default-device"};
  const int status = n.compile(prog, 4, options);
  size_t log_size = 0;
  n.log_size(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) n.log(prog, log.data());
  if (status) {
    error = std::string("nvrtcCompileProgram: ") + n.error_string(status) + "\n" + log;
    return {};
  }
  size_t size = 0;
  n.cubin_size(prog, &size);
  std::string cubin(size, '\0');
  n.cubin(prog, cubin.data());
  return cubin;
}

}  // namespace loom::cuda_fusion
