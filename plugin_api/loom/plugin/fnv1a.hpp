// loom/plugin/fnv1a.hpp — 64-bit FNV-1a over bytes: a stable hash (same value
// in every process and build) for cache keys and signatures, as the CPU
// plugin's compiled-region cache and loom.distributed's collective
// signatures use it. Not for security. C++17, header-only.
#pragma once

#include <cstdint>
#include <string_view>

namespace loom::plugin {

inline constexpr uint64_t kFnv1aBasis = 1469598103934665603ull;

// Continues the hash `h` over `bytes` (start from kFnv1aBasis).
constexpr uint64_t fnv1a(std::string_view bytes, uint64_t h = kFnv1aBasis) {
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace loom::plugin
