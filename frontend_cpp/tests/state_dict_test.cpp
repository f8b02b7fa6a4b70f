// state_dict_test.cpp — loom::StateDict keeps order, replaces in place and
// names missing keys.
#include <loom/loom.h>
#include <loom/state_dict.h>

#include <catch2/catch.hpp>

TEST_CASE("a state dict keeps insertion order and replaces in place") {
  loom::StateDict sd;
  sd.insert("b", loom::ones({2}));
  sd.insert("a", loom::zeros({3}));
  sd.insert("b", loom::zeros({4}));
  REQUIRE(sd.keys() == std::vector<std::string>{"b", "a"});
  CHECK(sd.at("b").numel() == 4);
  CHECK(sd.contains("a"));
  CHECK(sd.find("c") == nullptr);
  REQUIRE(sd.erase("b"));
  CHECK_FALSE(sd.erase("b"));
  REQUIRE(sd.keys() == std::vector<std::string>{"a"});
  CHECK(sd.at("a").numel() == 3);
  CHECK_THROWS_WITH(sd.at("missing"), Catch::Contains("no entry 'missing'"));
}
