// expectations.h — known results of a backend (--expect FILE).
//
// One expectation a line: `<case-id-glob> <STATUS> <reason...>`; '#' starts
// a comment, blank lines are ignored. The first line whose glob matches a
// case applies. A case whose status equals its expectation is "expected"
// and never fails the run; a matching case that now PASSes is an
// unexpected pass, reported (and failing the run) so the file gets updated.
#pragma once

#include "case_result.h"
#include "status.h"

#include <string>
#include <vector>

namespace loom::conformance {

struct Expectation {
  std::string glob;
  Status status = Status::Pass;
  std::string reason;
  int line = 0;
};

// Throws std::runtime_error naming the file and line of a malformed entry.
std::vector<Expectation> parse_expectations(const std::string& text, const std::string& origin);
std::vector<Expectation> load_expectations(const std::string& path);

// The first expectation matching `id`, or nullptr.
const Expectation* find_expectation(const std::vector<Expectation>& list, const std::string& id);

// Marks r.expected / r.expectation from the list.
void apply_expectations(const std::vector<Expectation>& list, CaseResult& r);

// Whether a result fails the run: an unexpected non-passing status (see
// is_failure), or an unexpected pass of a case expected to fail.
bool fails_run(const CaseResult& r, bool fallback_ok);
bool is_unexpected_pass(const CaseResult& r);

}  // namespace loom::conformance
