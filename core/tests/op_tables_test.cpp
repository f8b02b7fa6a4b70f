// The elementwise op tables (loom/plugin/op_tables.h) are the one source of
// each op's dtype rule. These tests fail when something else disagrees with
// them: an op the core does not define, a plugin kernel registered with
// another dtype mask, or a row of docs/kernel_conventions.md whose rule
// column says something else.
#include <catch2/catch.hpp>

#include <loom/device.h>
#include <loom/op_registry.h>
#include <loom/plugin/op_rules.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace {

using loom::plugin::BinaryRule;
using loom::plugin::kernel_mask;
using loom::plugin::UnaryRule;

std::string mask_names(uint64_t mask) {
  std::string s;
  for (int d = 0; d < LOOM_DTYPE_COUNT; ++d)
    if (mask >> d & 1) s += std::string(s.empty() ? "" : " ") + loom::plugin::dtype_name(d);
  return "{" + s + "}";
}

// The names of a row and of its in-place form when it has one.
std::vector<std::string> names_of(const loom::plugin::ElementwiseOpRow& row) {
  std::vector<std::string> names{std::string(row.name)};
  if (row.in_place) names.push_back(std::string(row.name) + "_");
  return names;
}

}  // namespace

TEST_CASE("every op of the tables is in the catalog with the CPU kernel's mask equal to its rule") {
  const int cpu = loom::device_type_slot("cpu");
  auto& dispatcher = loom::Dispatcher::instance();
  int checked = 0;
  for (auto* row = loom::plugin::elementwise_ops_begin(); row != loom::plugin::elementwise_ops_end(); ++row) {
    for (const std::string& name : names_of(*row)) {
      CAPTURE(name);
      const loom::OpDef* op = dispatcher.find(name);
      REQUIRE(op != nullptr);
      const loom::KernelEntry* k = op->kernel(cpu);
      REQUIRE(k != nullptr);
      INFO("cpu mask " << mask_names(k->dtypes) << ", table " << mask_names(row->mask));
      CHECK(k->dtypes == row->mask);
      ++checked;
    }
  }
  CHECK(checked > 80);
  // A row without an in-place form has none in the catalog either.
  CHECK(dispatcher.find("maximum_") == nullptr);
  CHECK(dispatcher.find("isnan_") == nullptr);
}

// docs/kernel_conventions.md: the unary table's "rule" column and the
// binary table's "compute / output dtype" column, read as masks.
namespace {

std::string read_doc() {
  std::ifstream in(LOOM_DOCS_DIR "/kernel_conventions.md");
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The mask a rule column's text states, or 0 when it states none this test reads.
uint64_t unary_doc_mask(const std::string& rule) {
  if (rule.rfind("float-only", 0) == 0 || rule.rfind("float", 0) == 0) return kernel_mask(UnaryRule::Float);
  if (rule.rfind("same, no bool", 0) == 0) return kernel_mask(UnaryRule::SameNoBool);
  if (rule.rfind("same (bool is cast to int64", 0) == 0) return kernel_mask(UnaryRule::Square);
  if (rule.rfind("same", 0) == 0 || rule.rfind("to-bool", 0) == 0) return kernel_mask(UnaryRule::Same);
  return 0;
}
uint64_t binary_doc_mask(const std::string& rule) {
  if (rule.rfind("promoted, no bool", 0) == 0) return kernel_mask(BinaryRule::Arith);
  if (rule.rfind("promoted; integers and bool only", 0) == 0) return kernel_mask(BinaryRule::Bitwise);
  if (rule.rfind("inputs in the promoted dtype; **output bool**", 0) == 0) return kernel_mask(BinaryRule::Compare);
  if (rule.rfind("promoted", 0) == 0) return kernel_mask(BinaryRule::Extremum);
  if (rule.rfind("float", 0) == 0) return kernel_mask(BinaryRule::FloatBin);
  return 0;
}

// op name -> mask, from the table rows under `heading`: the ops named in
// backticks in the first column, the mask from column `rule_column`.
std::map<std::string, uint64_t> doc_rules(const std::string& doc, const std::string& heading, int rule_column,
                                          uint64_t (*mask_of)(const std::string&)) {
  std::map<std::string, uint64_t> rules;
  size_t at = doc.find(heading);
  REQUIRE(at != std::string::npos);
  std::istringstream lines(doc.substr(at + heading.size()));
  std::string line;
  const std::regex tick("`([a-z0-9_]+)`");
  while (std::getline(lines, line) && line.rfind("## ", 0) != 0) {
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cols;
    std::string cell;
    for (size_t i = 1; i < line.size(); ++i) {  // split on unescaped |
      if (line[i] == '|' && line[i - 1] != '\\') {
        cols.push_back(cell);
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    REQUIRE(static_cast<int>(cols.size()) > rule_column);
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    const uint64_t mask = mask_of(trim(cols[rule_column]));
    for (std::sregex_iterator m(cols[0].begin(), cols[0].end(), tick), end; m != end; ++m)
      rules[(*m)[1]] = mask;
  }
  return rules;
}

}  // namespace

TEST_CASE("docs/kernel_conventions.md states each table op's rule as the table does") {
  const std::string doc = read_doc();
  auto rules = doc_rules(doc, "## Elementwise unary ops", 2, unary_doc_mask);
  const auto binary = doc_rules(doc, "## Elementwise binary and ternary ops", 2, binary_doc_mask);
  rules.insert(binary.begin(), binary.end());
  int documented = 0;
  for (auto* row = loom::plugin::elementwise_ops_begin(); row != loom::plugin::elementwise_ops_end(); ++row) {
    const std::string name(row->name);
    CAPTURE(name);
    CHECK(doc.find("`" + name + "`") != std::string::npos);  // every op is documented
    const auto it = rules.find(name);
    if (it == rules.end()) continue;  // documented elsewhere (add, mul, neg: "Ops")
    ++documented;
    INFO("doc " << mask_names(it->second) << ", table " << mask_names(row->mask));
    CHECK(it->second == row->mask);
  }
  CHECK(documented >= 40);
}

// The activations' gradient ops are listed twice: their schemas in the
// catalog (ops_activation_backward.cpp) and the plugins' list of kernels
// with the number of Scalar values each functor takes (scalar_ops.hpp).
TEST_CASE("the plugins' activation-gradient list matches the catalog's schemas") {
  auto& dispatcher = loom::Dispatcher::instance();
  int checked = 0;
#define LOOM_CHECK_ACTIVATION_BACKWARD(fn, op_name, Functor, values)                               \
  {                                                                                                \
    CAPTURE(op_name);                                                                              \
    const loom::OpDef* op = dispatcher.find(op_name);                                              \
    REQUIRE(op != nullptr);                                                                        \
    int tensors = 0, scalars = 0;                                                                  \
    for (const auto& a : op->schema().args) (a.is_tensor() ? tensors : scalars) += 1;              \
    CHECK(tensors == 2);                                                                           \
    CHECK(scalars == values);                                                                      \
    for (const auto& a : op->schema().args)                                                        \
      if (!a.is_tensor()) CHECK(a.type == loom::ArgType::Scalar);                                  \
    ++checked;                                                                                     \
  }
  LOOM_PLUGIN_ACTIVATION_BACKWARD_OPS(LOOM_CHECK_ACTIVATION_BACKWARD)
#undef LOOM_CHECK_ACTIVATION_BACKWARD
  CHECK(checked == 8);
}
