// The worker protocol's result line survives any message text.
#include "case_result.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace loom::conformance;

TEST_CASE("a result round-trips through its line, tabs and newlines included") {
  CaseResult r;
  r.id = "add/same shape/float32/out";
  r.op = "add";
  r.dtype = "float32";
  r.variant = "out";
  r.seed = 0xfedcba9876543210ull;
  r.shapes = "[[4,5],[4,5]]";
  r.status = Status::FailValue;
  r.max_abs = 0.125;
  r.message = "line one\nline\ttwo \\ done";
  r.providers = "plugin 'sim', CPU fallback";
  const std::string line = encode_result(r);
  CHECK(line.find('\n') == std::string::npos);
  auto back = decode_result(line);
  REQUIRE(back);
  CHECK(back->id == r.id);
  CHECK(back->seed == r.seed);
  CHECK(back->status == Status::FailValue);
  CHECK(back->max_abs == 0.125);
  CHECK(back->message == r.message);
  CHECK(back->providers == r.providers);
  CHECK(std::isnan(back->device_us));
  CHECK_FALSE(decode_result("garbage"));
}
