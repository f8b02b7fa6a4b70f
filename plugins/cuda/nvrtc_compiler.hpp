// NVRTC, the CUDA toolkit's run-time compiler, loaded with dlopen on first
// use: the plugin links no NVRTC, so it loads (and its regions decline,
// naming the library) where the toolkit's libnvrtc is not installed.
// No CUDA header and no GPU needed: the host-only tests compile with it.
#pragma once

#include <string>

namespace loom::cuda_fusion {

// Why NVRTC cannot be used ("" when it can): the libraries tried.
const std::string& nvrtc_missing();

// Compiles `source` for sm_<arch> (90 for H100/H200) into a CUBIN. Returns
// the CUBIN's bytes, or "" with `error` set to NVRTC's status and log.
std::string compile_cubin(const std::string& source, int arch, std::string& error);

}  // namespace loom::cuda_fusion
