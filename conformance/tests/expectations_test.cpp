// The expectations file, the glob matching of case IDs, and which results
// fail a run.
#include "case_spec.h"
#include "expectations.h"

#include <catch2/catch.hpp>

using namespace loom::conformance;

TEST_CASE("case-id globs") {
  CHECK(glob_match("add/*/float32/*", "add/same shape/float32/contiguous"));
  CHECK_FALSE(glob_match("add/*/float32/*", "add/same shape/int64/contiguous"));
  CHECK(glob_match("*", ""));
  CHECK(glob_match("a?c", "abc"));
  CHECK_FALSE(glob_match("a?c", "ac"));
  CHECK(glob_match("*/out", "matmul/2-d/float16/out"));
}

TEST_CASE("expectations parse with comments and reasons; bad lines are named") {
  const auto list = parse_expectations(
      "# known\n\nadd/*/float16/* FAIL_VALUE  half rounding differs  # see issue 9\nsum/* CRASH driver bug\n", "x.expect");
  REQUIRE(list.size() == 2);
  CHECK(list[0].glob == "add/*/float16/*");
  CHECK(list[0].status == Status::FailValue);
  CHECK(list[0].reason == "half rounding differs  ");
  CHECK(list[0].line == 3);
  CHECK_THROWS_WITH(parse_expectations("add/* BROKEN why\n", "x.expect"),
                    Catch::Contains("x.expect:1") && Catch::Contains("unknown status 'BROKEN'"));
  CHECK_THROWS_WITH(parse_expectations("add/* CRASH\n", "x.expect"), Catch::Contains("needs a reason"));
  CHECK_THROWS_WITH(parse_expectations("add/*\n", "e"), Catch::Contains("e:1"));
  CHECK_THROWS_WITH(load_expectations("/nonexistent/file"), Catch::Contains("cannot read"));
}

TEST_CASE("an expected failure passes the run; an unexpected pass fails it") {
  const auto list = parse_expectations("add/* FAIL_VALUE known\n", "e");
  CaseResult r;
  r.id = "add/x/float32/contiguous";
  r.status = Status::FailValue;
  apply_expectations(list, r);
  CHECK(r.expected);
  CHECK_FALSE(fails_run(r, true));

  CaseResult fixed;
  fixed.id = "add/x/float32/contiguous";
  fixed.status = Status::Pass;
  apply_expectations(list, fixed);
  CHECK(is_unexpected_pass(fixed));
  CHECK(fails_run(fixed, true));

  CaseResult other;
  other.id = "add/x/float32/contiguous";
  other.status = Status::Crash;  // expected FAIL_VALUE, got worse
  apply_expectations(list, other);
  CHECK(fails_run(other, true));
}

TEST_CASE("which statuses fail a run without expectations") {
  CHECK_FALSE(is_failure(Status::Pass, true));
  CHECK_FALSE(is_failure(Status::Unsupported, true));
  CHECK_FALSE(is_failure(Status::Fallback, true));
  CHECK(is_failure(Status::Fallback, false));
  for (Status s : {Status::FailValue, Status::FailDType, Status::FailShape, Status::Error, Status::Crash, Status::Timeout})
    CHECK(is_failure(s, true));
}
