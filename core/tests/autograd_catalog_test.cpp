// autograd_catalog_test.cpp — every differentiable op of the core catalog
// passes gradcheck and gradgradcheck on its gradient checks (loom/opinfo.h:
// its samples marked `gradcheck`, and its hand-written cases); an op without
// a derivative (or a mark that it has none), or without checks, fails here.
#include <loom/opinfo.h>

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

TEST_CASE("autograd catalog: every core op has a derivative (or is marked as having none) and gradient checks",
          "[autograd]") {
  for (const loom::OpDef* op : loom::Dispatcher::instance().ops()) {
    if (!is_core_op(*op)) continue;
    const Kind kind = classify(*op);
    INFO("op " << op->name());
    CHECK(kind != Kind::Missing);  // add LOOM_DERIVATIVE (or LOOM_NOT_DIFFERENTIABLE) next to the op
    // Mark some of its samples .for_gradcheck(), or add LOOM_GRAD_CASES for it.
    if (kind == Kind::NeedsCases) CHECK_FALSE(loom::opinfo::gradient_checks(*op).empty());
  }
}

TEST_CASE("autograd catalog: every hand-written gradient case names a catalog op", "[autograd]") {
  for (const auto& [name, make] : loom::opinfo::grad_cases()) {
    INFO("op " << name);
    CHECK(loom::Dispatcher::instance().find(name) != nullptr);
  }
}

TEST_CASE("autograd catalog: gradcheck and gradgradcheck pass on every gradient check", "[autograd]") {
  for (const loom::OpDef* op : loom::Dispatcher::instance().ops()) {
    // Samples of ops without a derivative (comparisons, bit ops) may be
    // marked for the sake of the differentiable ops sharing their shapes.
    const bool differentiable = is_core_op(*op) && classify(*op) == Kind::NeedsCases;
    if (!differentiable && !loom::opinfo::grad_cases().count(op->name())) continue;
    for (const loom::opinfo::GradCase& c : loom::opinfo::gradient_checks(*op)) {
      INFO("op " << op->name() << ", case '" << c.label << "'");
      CHECK_NOTHROW(loom::autograd::gradcheck(c.fn, c.inputs, c.options));
      if (c.check_double) CHECK_NOTHROW(loom::autograd::gradgradcheck(c.fn, c.inputs, c.options));
    }
  }
}
