// The safetensors reader on every input of fuzz/ (seed corpus and crash
// regressions): parse_safetensors and load_buffer each give tensors or
// throw loom::Error naming the buffer, never anything else. See
// fuzz/README.md.
#include <loom/io.h>

#include "fuzz_inputs.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

}  // namespace

TEST_CASE("io: every fuzz corpus and regression input parses and loads, or errors cleanly", "[io][fuzz]") {
  const auto inputs = loom_fuzz::inputs("safetensors");
  REQUIRE(inputs.size() >= 10);
  for (const auto& in : inputs) {
    INFO(in.name());
    const std::vector<uint8_t> bytes = bytes_of(in.bytes);
    bool parsed = false, loaded = false;
    try {
      const loom::io::Header header = loom::io::parse_safetensors(bytes.data(), bytes.size(), "<fuzz>");
      parsed = true;
      const loom::io::Loaded l = loom::io::load_buffer(bytes.data(), bytes.size());
      loaded = true;
      CHECK(l.tensors.size() == header.entries.size());
      for (const auto& e : header.entries) {
        const loom::Tensor* t = l.tensors.find(e.name);
        REQUIRE(t != nullptr);
        CHECK(t->dtype() == e.dtype);
        CHECK(t->numel() * static_cast<int64_t>(loom::itemsize(e.dtype)) == static_cast<int64_t>(e.end - e.begin));
      }
    } catch (const loom::Error& e) {
      CHECK_THAT(e.what(), Catch::StartsWith(parsed ? "<buffer>: " : "<fuzz>: "));
    }
    CHECK(parsed == loaded);  // the loader adds no checks the parser lacks
    if (!in.regression) CHECK(loaded == in.valid);
  }
}
