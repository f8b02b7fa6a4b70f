// manifest_fuzzer.cpp — libFuzzer target for the plugin manifest parser
// (registry/src/manifest.cpp: parse_manifest, parse_version).
//
// A manifest is a file any package can drop into a search directory, so the
// parser must answer every byte string with a manifest or an error, never a
// crash. On success the result must satisfy what load_plugin relies on.
#include "../registry/src/detail.h"
#include "fuzz_check.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace reg = loom::registry::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  // A directory that does not exist: library_path resolution must cope.
  reg::Manifest manifest;
  std::string error, name_hint;
  if (reg::parse_manifest(text, "/nonexistent-loom-fuzz/plugins/fuzz.json", manifest, error, name_hint)) {
    LOOM_FUZZ_CHECK(error.empty());
    LOOM_FUZZ_CHECK(!manifest.name.empty() && manifest.name == name_hint);
    LOOM_FUZZ_CHECK(!manifest.library_path_raw.empty());
    LOOM_FUZZ_CHECK(!manifest.library_path.empty() && manifest.library_path.front() == '/');
    LOOM_FUZZ_CHECK(manifest.abi_major >= 0 && manifest.abi_minor >= 0);
    for (const std::string& type : manifest.device_types) LOOM_FUZZ_CHECK(!type.empty());
  } else {
    LOOM_FUZZ_CHECK(!error.empty());
  }

  // The version parser on its own (it also reads file_format_version).
  int major = -1, minor = -1;
  if (reg::parse_version(text, major, minor)) LOOM_FUZZ_CHECK(major >= 0 && minor >= 0);
  return 0;
}
