// expectations.cpp — parsing and applying an expectations file.
#include "expectations.h"

#include "case_spec.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace loom::conformance {

std::vector<Expectation> parse_expectations(const std::string& text, const std::string& origin) {
  std::vector<Expectation> out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    Expectation e;
    std::string status;
    if (!(words >> e.glob)) continue;  // blank
    if (!(words >> status))
      throw std::runtime_error(origin + ":" + std::to_string(number) + ": expected '<case-id-glob> <STATUS> <reason>', got only '" + e.glob + "'");
    auto parsed = parse_status(status);
    if (!parsed)
      throw std::runtime_error(origin + ":" + std::to_string(number) + ": unknown status '" + status +
                               "' (one of PASS, FAIL_VALUE, FAIL_DTYPE, FAIL_SHAPE, ERROR, CRASH, TIMEOUT, FALLBACK, UNSUPPORTED)");
    e.status = *parsed;
    std::getline(words >> std::ws, e.reason);
    if (e.reason.empty())
      throw std::runtime_error(origin + ":" + std::to_string(number) + ": '" + e.glob + " " + status +
                               "' needs a reason after the status");
    e.line = number;
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<Expectation> load_expectations(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read the expectations file '" + path + "'");
  std::ostringstream text;
  text << f.rdbuf();
  return parse_expectations(text.str(), path);
}

const Expectation* find_expectation(const std::vector<Expectation>& list, const std::string& id) {
  for (const auto& e : list)
    if (glob_match(e.glob, id)) return &e;
  return nullptr;
}

void apply_expectations(const std::vector<Expectation>& list, CaseResult& r) {
  const Expectation* e = find_expectation(list, r.id);
  if (!e) return;
  r.expected = e->status == r.status;
  r.expectation = std::string(to_string(e->status)) + ": " + e->reason;
}

bool is_unexpected_pass(const CaseResult& r) {
  return !r.expectation.empty() && !r.expected && r.status == Status::Pass;
}

bool fails_run(const CaseResult& r, bool fallback_ok) {
  if (r.expected) return false;
  if (is_unexpected_pass(r)) return true;
  return is_failure(r.status, fallback_ok);
}

}  // namespace loom::conformance
