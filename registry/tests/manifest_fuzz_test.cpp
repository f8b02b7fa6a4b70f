// The manifest parser on every input of fuzz/ (seed corpus and crash
// regressions): each parses or is rejected with a message, never a crash or
// an escaping exception. See fuzz/README.md.
#include "../src/detail.h"
#include "regtest.h"

#include "fuzz_inputs.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace regtest;
namespace reg = loom::registry::detail;

namespace {

struct Parsed {
  bool ok = false;
  std::string error;
};

Parsed parse(const std::string& text) {
  reg::Manifest manifest;
  Parsed out;
  std::string name_hint;
  out.ok = reg::parse_manifest(text, "/nonexistent-loom-test/plugins/fuzz.json", manifest, out.error, name_hint);
  return out;
}

std::string nested_priority(int depth) {
  return R"({"file_format_version":"1.0","plugin":{"name":"a","library_path":"b","abi_version":"1.0",)"
         R"("device_types":[],"priority":)" +
         std::string(depth, '[') + std::string(depth, ']') + "}}";
}

}  // namespace

TEST_CASE("manifest parser: every fuzz corpus and regression input parses or errors cleanly",
          "[registry][fuzz]") {
  const auto inputs = loom_fuzz::inputs("manifest");
  REQUIRE(inputs.size() >= 10);
  for (const auto& in : inputs) {
    INFO(in.name());
    Parsed p;
    REQUIRE_NOTHROW(p = parse(in.bytes));
    CHECK(p.ok == p.error.empty());
    if (!in.regression) CHECK(p.ok == in.valid);
  }
}

TEST_CASE("manifest parser regression: a number too large for a double is an invalid-JSON error",
          "[registry][fuzz]") {
  // Found by fuzz/manifest: nlohmann throws out_of_range (not parse_error)
  // for "1e999", and it escaped parse_manifest.
  Parsed p = parse(loom_fuzz::regression("manifest", "crash-number-overflow-406.json"));
  CHECK_FALSE(p.ok);
  CHECK_THAT(p.error, Contains("invalid JSON: number overflow parsing"));
  p = parse(R"({"file_format_version":"1.0","plugin":{"priority":1e999}})");
  CHECK_THAT(p.error, Contains("invalid JSON: number overflow parsing '1e999'"));
}

TEST_CASE("manifest parser regression: a deeply nested priority is described, not dumped",
          "[registry][fuzz]") {
  // Found by fuzz/manifest: the message printed the value with dump(), which
  // recurses once per level and overflowed the stack.
  Parsed p = parse(loom_fuzz::regression("manifest", "stack-overflow-nested-priority.json"));
  CHECK(p.error == "field \"plugin.priority\" must be an integer, got array");
  p = parse(nested_priority(1'000'000));  // deep enough for any stack without ASan too
  CHECK(p.error == "field \"plugin.priority\" must be an integer, got array");
  p = parse(R"({"file_format_version":"1.0","plugin":{"name":"a","library_path":"b","abi_version":"1.0",)"
            R"("device_types":[],"priority":"high"}})");
  CHECK(p.error == "field \"plugin.priority\" must be an integer, got string \"high\"");
}

TEST_CASE("a registry scanning a manifest that once crashed the parser marks it failed and goes on",
          "[registry][fuzz]") {
  const auto dir = std::filesystem::temp_directory_path() / ("loom_manifest_fuzz_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "overflow.json", std::ios::binary)
      << loom_fuzz::regression("manifest", "crash-number-overflow-406.json");
  {
    Registry r(std::vector<std::string>{dir.string()});
    CHECK_NOTHROW(r.load_all());
    PluginRecord rec = by_manifest(r, (dir / "overflow.json").string());
    CHECK(rec.state == PluginState::Failed);
    CHECK_THAT(rec.reason, Contains("invalid JSON: number overflow"));
  }
  std::filesystem::remove_all(dir);
}
