// The op-schema parser on every input of fuzz/ (seed corpus and crash
// regressions): each parses or throws loom::Error naming the schema, never
// anything else. See fuzz/README.md.
#include <loom/error.h>
#include <loom/schema.h>
#include <loom/schema_defaults.h>

#include "fuzz_inputs.h"

#include <catch2/catch.hpp>

TEST_CASE("schema parser: every fuzz corpus and regression input parses or errors cleanly", "[schema][fuzz]") {
  const auto inputs = loom_fuzz::inputs("schema");
  REQUIRE(inputs.size() >= 10);
  for (const auto& in : inputs) {
    INFO(in.name() << ": " << in.bytes);
    bool ok = false;
    try {
      const loom::Schema s = loom::parse_schema(in.bytes);
      ok = true;
      CHECK(s.text == in.bytes);
      for (const auto& a : s.args)
        if (a.default_text) (void)loom::default_value_of(a);
    } catch (const loom::Error& e) {
      CHECK_THAT(e.what(), Catch::Contains("invalid op schema '"));
    }
    if (!in.regression) CHECK(ok == in.valid);
  }
}

TEST_CASE("schema parser: a list size of many digits is refused, not overflowed", "[schema][fuzz]") {
  // std::atoi of "99999999999" is undefined behaviour; the size is now
  // parsed with a range check.
  CHECK_THROWS_WITH(loom::parse_schema("f(int[99999999999999999999] x) -> Tensor"),
                    Catch::Contains("list size must be in 1..64"));
  CHECK_THROWS_WITH(loom::parse_schema("f(int[4294967298] x) -> Tensor"),
                    Catch::Contains("list size must be in 1..64"));
  CHECK(loom::parse_schema("f(int[64] x) -> Tensor").args[0].list_size == 64);
}
