// op_tally.cpp — see op_tally.h.
#include "op_tally.h"

#include "fallback_ops.h"


namespace loom::conformance {
namespace {

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}

}  // namespace

void Tally::add(const CaseResult& r) {
  switch (r.status) {
    case Status::Pass: ++native; break;
    case Status::Unsupported: ++untested; break;
    case Status::Fallback:
      ++fallback;
      fallback_dtypes.insert(r.dtype);
      fallback_variants.insert(r.variant);
      for (const auto& op : split_ops(r.fallbacks)) fallback_ops.insert(op);
      break;
    default:
      ++failing;
      failures.insert(r.dtype + " " + r.variant + ": " + to_string(r.status));
      break;
  }
}

std::map<std::string, OpTally> tally_by_op(const std::vector<CaseResult>& results) {
  std::map<std::string, OpTally> out;
  for (const auto& r : results) {
    OpTally& t = out[r.op];
    if (r.variant == "grad") {
      t.grad.add(r);
    } else {
      t.forward.add(r);
      t.by_dtype[r.dtype].add(r);
    }
  }
  return out;
}

std::string describe(const Tally& t) {
  if (t.tested() == 0) return "untested (" + std::to_string(t.untested) + " case(s) the CPU reference rejects)";
  std::string s = std::to_string(t.native) + "/" + std::to_string(t.tested()) + " native";
  if (t.fallback) {
    const std::string ops = quoted_list(joined(t.fallback_ops));
    s += ", " + std::to_string(t.fallback) + " fall back (dtypes " + joined(t.fallback_dtypes) + "; forms " +
         joined(t.fallback_variants) + (ops.empty() ? "" : "; through " + ops) + ")";
  }
  if (t.failing) {
    constexpr size_t kShown = 4;
    std::string where;
    size_t n = 0;
    for (const auto& f : t.failures)
      if (n++ < kShown) where += (where.empty() ? "" : ", ") + f;
    if (t.failures.size() > kShown) where += ", ...";
    s += ", " + std::to_string(t.failing) + " failing (" + where + ")";
  }
  return s;
}

}  // namespace loom::conformance
