// autograd_catalog_test.cpp — every differentiable op of the core catalog
// passes gradcheck and gradgradcheck on its registered cases; an op without
// a derivative (or a mark that it has none), or without cases, fails here.
#include "autograd_cases.h"

#include <catch2/catch.hpp>
#include <loom/op_registry.h>

#include "../src/autograd/formula.h"

namespace {

bool is_core_op(const loom::OpDef& op) { return op.defined_at().rfind("loom core", 0) == 0; }

enum class Kind { NotDifferentiable, InPlaceViaPartner, NeedsCases, Missing };

Kind classify(const loom::OpDef& op) {
  const auto* f = op.formula();
  if (f && !f->backward) return Kind::NotDifferentiable;
  if (op.schema().is_inplace() && !f) {
    const std::string& n = op.name();
    const size_t dot = n.find('.');
    std::string base = n.substr(0, dot);
    if (!base.empty() && base.back() == '_') base.pop_back();
    const std::string partner = base + (dot == std::string::npos ? "" : n.substr(dot));
    return loom::Dispatcher::instance().find(partner) ? Kind::InPlaceViaPartner : Kind::Missing;
  }
  if (f || op.composite()) return Kind::NeedsCases;
  return Kind::Missing;
}

}  // namespace

TEST_CASE("autograd catalog: every core op has a derivative (or is marked as having none) and cases",
          "[autograd]") {
  const auto& cases = loom_test::grad_cases();
  for (const loom::OpDef* op : loom::Dispatcher::instance().ops()) {
    if (!is_core_op(*op)) continue;
    const std::string& name = op->name();
    const Kind kind = classify(*op);
    INFO("op " << name);
    CHECK(kind != Kind::Missing);  // add LOOM_DERIVATIVE (or LOOM_NOT_DIFFERENTIABLE) next to the op
    if (kind == Kind::NeedsCases) CHECK(cases.count(name) == 1);  // add LOOM_GRAD_CASES for it
  }
}

TEST_CASE("autograd catalog: gradcheck and gradgradcheck pass on every registered case", "[autograd]") {
  for (const auto& [op, make] : loom_test::grad_cases()) {
    for (const loom_test::GradCase& c : make()) {
      INFO("op " << op << ", case '" << c.label << "'");
      CHECK_NOTHROW(loom::autograd::gradcheck(c.fn, c.inputs, c.options));
      if (c.check_double) CHECK_NOTHROW(loom::autograd::gradgradcheck(c.fn, c.inputs, c.options));
    }
  }
}
