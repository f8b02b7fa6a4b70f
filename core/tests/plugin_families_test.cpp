// The CPU and CUDA plugins register their kernels in families of the same
// names, in the same order (docs/backend_guide.md; plugins/*/register.cpp):
// a reader who knows where the CPU's softmax is registered finds the
// CUDA's under the same register_<family>_kernels. Both have every family.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

// The register_<family>_kernels(r) calls of a plugin's init, in order.
std::vector<std::string> families(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::vector<std::string> out;
  static const std::regex call(R"(register_([a-z_]+)_kernels\(r\);)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), call); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

}  // namespace

TEST_CASE("the CPU and CUDA plugins register the same kernel families, in the same order") {
  const auto cpu = families(LOOM_SOURCE_DIR "/plugins/cpu/register.cpp");
  const auto cuda = families(LOOM_SOURCE_DIR "/plugins/cuda/register.cpp");
  REQUIRE(cpu.size() >= 10);
  CHECK(cpu == cuda);
}
