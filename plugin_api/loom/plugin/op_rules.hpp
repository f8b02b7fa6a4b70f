// loom/plugin/op_rules.hpp — the dtype rules of loom/plugin/op_tables.h as
// C++ constants: which compute dtypes a kernel of each elementwise op
// receives, looked up by op name at compile time. A plugin registers a
// table op with `op_mask("remainder")` and visits dtypes with
// `op_class("remainder")`, so neither can disagree with the core's rule
// (an unknown name does not compile). Host code; C++17.
#pragma once

#include <loom/plugin/dtype_visit.hpp>
#include <loom/plugin/op_tables.h>
#include <loom/plugin/scalar_ops.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace loom::plugin {

// The rules of op_tables.h's rule column (what each means: its comment).
enum class UnaryRule { Float, FloatOnly, Same, SameNoBool, Square, ToBool };
enum class BinaryRule { Arith, Extremum, FloatBin, FloatOnly, Bitwise, Compare, Logical };

// The compute dtypes a kernel of the rule receives (its registration mask).
constexpr uint64_t kernel_mask(UnaryRule r) {
  switch (r) {
    case UnaryRule::Float:
    case UnaryRule::FloatOnly: return kFloatingMask;
    case UnaryRule::Same:
    case UnaryRule::ToBool: return kAllMask;
    case UnaryRule::SameNoBool:
    case UnaryRule::Square: return kNoBoolMask;  // Square: the core computes bool in int64
  }
  return 0;
}
constexpr uint64_t kernel_mask(BinaryRule r) {
  switch (r) {
    case BinaryRule::Arith: return kNoBoolMask;
    case BinaryRule::Extremum:
    case BinaryRule::Compare:
    case BinaryRule::Logical: return kAllMask;
    case BinaryRule::FloatBin:
    case BinaryRule::FloatOnly: return kFloatingMask;
    case BinaryRule::Bitwise: return kIntegralOrBoolMask;
  }
  return 0;
}

// Rules whose output has the compute dtype and whose functor is a
// same-dtype Op<T> with no rule of its own about dtypes (Bitwise is also
// same-dtype but visits integers and bool only).
constexpr bool is_arithmetic(BinaryRule r) {
  return r == BinaryRule::Arith || r == BinaryRule::Extremum || r == BinaryRule::FloatBin;
}

// The dtype class a kernel visits for a mask of the three visitable kinds.
constexpr DTypes dtype_class(uint64_t mask) {
  if (mask == kAllMask) return DTypes::All;
  if (mask == kNoBoolMask) return DTypes::NoBool;
  if (mask == kFloatingMask) return DTypes::Floating;
  if (mask == kIntegralMask) return DTypes::Integral;
  throw std::logic_error("dtype_class: not a dtype class mask");  // a compile error when constexpr
}

// One row of the tables: its name, mask, whether it has an in-place form,
// and whether its output is bool whatever the input (rules ToBool, Compare,
// Logical).
struct ElementwiseOpRow {
  std::string_view name;
  uint64_t mask;
  bool in_place;
  bool to_bool;
};

namespace detail {
#define LOOM_PLUGIN_UNARY_ROW(op, rule) {#op, kernel_mask(UnaryRule::rule), true, false},
#define LOOM_PLUGIN_PREDICATE_ROW(op) {#op, kernel_mask(UnaryRule::ToBool), false, true},
#define LOOM_PLUGIN_BINARY_ROW(op, rule, inplace, F) \
  {#op, kernel_mask(BinaryRule::rule), (inplace) != 0, BinaryRule::rule == BinaryRule::Compare || BinaryRule::rule == BinaryRule::Logical},
#define LOOM_PLUGIN_BINARY_SPECIAL_ROW(op, rule) {#op, kernel_mask(BinaryRule::rule), true, false},
inline constexpr ElementwiseOpRow kElementwiseOps[] = {
    LOOM_UNARY_OPS(LOOM_PLUGIN_UNARY_ROW) LOOM_PREDICATE_OPS(LOOM_PLUGIN_PREDICATE_ROW)
        LOOM_UNARY_SPECIAL_OPS(LOOM_PLUGIN_UNARY_ROW) LOOM_BINARY_OPS(LOOM_PLUGIN_BINARY_ROW)
            LOOM_BINARY_SPECIAL_OPS(LOOM_PLUGIN_BINARY_SPECIAL_ROW)};
#undef LOOM_PLUGIN_UNARY_ROW
#undef LOOM_PLUGIN_PREDICATE_ROW
#undef LOOM_PLUGIN_BINARY_ROW
#undef LOOM_PLUGIN_BINARY_SPECIAL_ROW
}  // namespace detail

// Every row, for tests and tools that walk the tables.
constexpr const ElementwiseOpRow* elementwise_ops_begin() { return detail::kElementwiseOps; }
constexpr const ElementwiseOpRow* elementwise_ops_end() {
  return detail::kElementwiseOps + sizeof(detail::kElementwiseOps) / sizeof(detail::kElementwiseOps[0]);
}

// The row of table op `op` ("abs"). Not a table op: a compile error where
// evaluated as a constant, std::logic_error otherwise.
constexpr const ElementwiseOpRow& op_row(std::string_view op) {
  for (const ElementwiseOpRow* r = elementwise_ops_begin(); r != elementwise_ops_end(); ++r)
    if (r->name == op) return *r;
  throw std::logic_error("op_row: not an op of loom/plugin/op_tables.h");
}

// The registration mask of table op `op` ("abs") or of its in-place form
// ("abs_"). Not a table op (or an in-place form it lacks): a compile error
// where evaluated as a constant, std::logic_error otherwise.
constexpr uint64_t op_mask(std::string_view op) {
  const bool in_place = !op.empty() && op.back() == '_';
  const ElementwiseOpRow& row = op_row(in_place ? op.substr(0, op.size() - 1) : op);
  if (in_place && !row.in_place) throw std::logic_error("op_mask: the table gives this op no in-place form");
  return row.mask;
}

// The dtype class a table op's kernel visits.
constexpr DTypes op_class(std::string_view op) { return dtype_class(op_mask(op)); }

// Whether table op `op` has an in-place form `op_`.
constexpr bool op_has_in_place(std::string_view op) { return op_row(op).in_place; }

// Whether table op `op` returns bool whatever its input dtype.
constexpr bool op_returns_bool(std::string_view op) { return op_row(op).to_bool; }

// Registers `fn` for table op `op` and, when the row has one, for its
// in-place form `op_` (the same kernel: outputs[0] aliases inputs[0]), each
// with the catalog's mask. Use LOOM_PLUGIN_REGISTER_TABLE_OP, which checks
// the name at compile time.
template <uint64_t Mask, bool InPlace>
void register_table_op(Registrar& r, const char* op, const char* device, LoomKernelFn fn) {
  r.kernel(op, device, fn, Mask);
  if constexpr (InPlace) r.kernel((std::string(op) + "_").c_str(), device, fn, Mask);
}

}  // namespace loom::plugin

// LOOM_PLUGIN_REGISTER_TABLE_OP(r, "remainder", "mydev", loom::plugin::kernel<my_remainder>)
#define LOOM_PLUGIN_REGISTER_TABLE_OP(registrar, op, device, fn)                               \
  ::loom::plugin::register_table_op<::loom::plugin::op_mask(op), ::loom::plugin::op_has_in_place(op)>( \
      registrar, op, device, fn)

namespace loom::plugin {

// ------------------------------------------------ binary rows as types ---

// One type per row of LOOM_BINARY_OPS, for plugins that register those ops
// by walking the table (register_binary_rows below):
//   Row::name, Row::rule, Row::in_place, Row::mask, and the row's functor
//   from scalar_ops.hpp: `Row::template Op<T>` (rules Arith, Extremum,
//   FloatBin, Bitwise: a same-dtype functor on storage T) or `Row::Pred`
//   (Compare, Logical: a predicate on opmath values).
namespace binary_rows {
#define LOOM_PLUGIN_ROW_FUNCTOR_Arith(F) \
  template <class T>                     \
  using Op = ops::F<T>;
#define LOOM_PLUGIN_ROW_FUNCTOR_Extremum LOOM_PLUGIN_ROW_FUNCTOR_Arith
#define LOOM_PLUGIN_ROW_FUNCTOR_FloatBin LOOM_PLUGIN_ROW_FUNCTOR_Arith
#define LOOM_PLUGIN_ROW_FUNCTOR_Bitwise LOOM_PLUGIN_ROW_FUNCTOR_Arith
#define LOOM_PLUGIN_ROW_FUNCTOR_Compare(F) using Pred = ops::F;
#define LOOM_PLUGIN_ROW_FUNCTOR_Logical LOOM_PLUGIN_ROW_FUNCTOR_Compare
#define LOOM_PLUGIN_ROW_TYPE(op, row_rule, inplace, F)               \
  struct op {                                                        \
    static constexpr const char* name = #op;                         \
    static constexpr BinaryRule rule = BinaryRule::row_rule;         \
    static constexpr bool in_place = (inplace) != 0;                 \
    static constexpr uint64_t mask = kernel_mask(BinaryRule::row_rule); \
    LOOM_PLUGIN_ROW_FUNCTOR_##row_rule(F)                            \
  };
LOOM_BINARY_OPS(LOOM_PLUGIN_ROW_TYPE)
#undef LOOM_PLUGIN_ROW_TYPE
#undef LOOM_PLUGIN_ROW_FUNCTOR_Arith
#undef LOOM_PLUGIN_ROW_FUNCTOR_Extremum
#undef LOOM_PLUGIN_ROW_FUNCTOR_FloatBin
#undef LOOM_PLUGIN_ROW_FUNCTOR_Bitwise
#undef LOOM_PLUGIN_ROW_FUNCTOR_Compare
#undef LOOM_PLUGIN_ROW_FUNCTOR_Logical

template <class... Rows>
struct List {};
#define LOOM_PLUGIN_ROW_NAME(op, rule, inplace, F) , op
template <class First, class... Rows>
List<Rows...> drop_first(List<First, Rows...>);
using All = decltype(drop_first(List<void LOOM_BINARY_OPS(LOOM_PLUGIN_ROW_NAME)>{}));
#undef LOOM_PLUGIN_ROW_NAME
}  // namespace binary_rows

// The kernel of one binary row, from a plugin's kernel families. Families
// is a struct of static member templates (any subset of the three):
//   template <template <class> class Op, DTypes Set>
//   static void arithmetic(const LoomKernelCall&, const char* op);  // Arith, Extremum, FloatBin
//   template <template <class> class Op>
//   static void bitwise(const LoomKernelCall&, const char* op);     // Bitwise
//   template <class Pred, bool SameDtypeOut>
//   static void predicate(const LoomKernelCall&, const char* op);   // Compare, Logical
// plus `static constexpr bool serves(BinaryRule)` saying which rows it takes.
// Which family serves which rule is decided here, once for every device.
template <class Families, class Row>
void binary_row_kernel(const LoomKernelCall& c) {
  if constexpr (is_arithmetic(Row::rule))
    Families::template arithmetic<Row::template Op, dtype_class(Row::mask)>(c, Row::name);
  else if constexpr (Row::rule == BinaryRule::Bitwise)
    Families::template bitwise<Row::template Op>(c, Row::name);
  else
    Families::template predicate<typename Row::Pred, Row::rule == BinaryRule::Logical>(c, Row::name);
}

// Registers binary_row_kernel<Families, Row> for each row of LOOM_BINARY_OPS
// that Families serves, as the op and its in-place form, with the row's
// mask. A row added to the table is then registered on every device
// without touching the plugins.
template <class Families, class... Rows>
void register_binary_rows(Registrar& r, const char* device, binary_rows::List<Rows...>) {
  const auto one = [&](auto row) {
    using Row = decltype(row);
    if constexpr (Families::serves(Row::rule))
      register_table_op<Row::mask, Row::in_place>(r, Row::name, device, kernel<binary_row_kernel<Families, Row>>);
  };
  (one(Rows{}), ...);
}
template <class Families>
void register_binary_rows(Registrar& r, const char* device) {
  register_binary_rows<Families>(r, device, binary_rows::All{});
}

}  // namespace loom::plugin
