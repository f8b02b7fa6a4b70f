// fuzz_inputs.h — the fuzz seed corpora and crash regressions, for the unit
// tests (g++ build, make test) that feed every one of them to its parser.
//
// Needs LOOM_FUZZ_DIR (the source folder fuzz/) defined by the test target.
// Naming: fuzz/corpus/<target>/valid_* must parse, every other corpus file
// must be rejected with a clean error; fuzz/regressions/<target>/* are
// inputs that once crashed a parser and must now merely not crash (their
// tests check the exact outcome).
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#ifndef LOOM_FUZZ_DIR
#error "define LOOM_FUZZ_DIR to the source folder fuzz/"
#endif

namespace loom_fuzz {

struct Input {
  std::filesystem::path path;
  std::string bytes;
  bool valid = false;       // a corpus file named valid_*
  bool regression = false;  // from fuzz/regressions/
  std::string name() const { return path.parent_path().filename().string() + "/" + path.filename().string(); }
};

inline std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every corpus and regression input of `target`, sorted by path.
inline std::vector<Input> inputs(const std::string& target) {
  std::vector<Input> out;
  for (const char* kind : {"corpus", "regressions"}) {
    const std::filesystem::path dir = std::filesystem::path(LOOM_FUZZ_DIR) / kind / target;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      // Dot files (.gitkeep keeps an empty folder in git) are not inputs.
      if (!entry.is_regular_file() || entry.path().filename().string().front() == '.') continue;
      Input in;
      in.path = entry.path();
      in.bytes = read_all(in.path);
      in.regression = std::string(kind) == "regressions";
      in.valid = !in.regression && in.path.filename().string().rfind("valid_", 0) == 0;
      out.push_back(std::move(in));
    }
  }
  std::sort(out.begin(), out.end(), [](const Input& a, const Input& b) { return a.path < b.path; });
  return out;
}

// The regression input `file` of `target` (a test naming one it checks).
inline std::string regression(const std::string& target, const std::string& file) {
  return read_all(std::filesystem::path(LOOM_FUZZ_DIR) / "regressions" / target / file);
}

}  // namespace loom_fuzz
