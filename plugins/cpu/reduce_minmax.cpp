// Value and index extremes: amax, amin (values), max.dim, min.dim (values
// and int64 indices), argmax, argmin (indices). NaN wins and the first one
// (or the first of equal extremes) is chosen; see reduce_ops.hpp.
#include "common.hpp"
#include "reduce.hpp"
#include "reduce_driver.hpp"
#include "reduce_ops.hpp"

namespace loom::cpu {
namespace {

template <bool IsMax>
void extreme(const LoomKernelCall& c, const char* name) {
  expect_arity(c, name, 1, 1);
  const int32_t dtype = c.inputs[0].dtype;
  reduce::Plan plan;
  reduce::prepare(c, name, 1, &dtype, 1, plan);
  dispatch<DTypes::All>(dtype, name, [&](auto tag) {
    using T = decltype(tag);
    reduce::run(plan, plugin::data_ptr<const T>(c.inputs[0]),
                reduce::ExtremeOp<T, IsMax>{plugin::data_ptr<T>(c.outputs[0])});
  });
}

// Index ops reduce one dim (the core flattens for a dim-less argmax);
// more would make "the index" ambiguous.
void expect_one_dim(const LoomKernelCall& c, const char* name) {
  const LoomValue& v = c.values[0];
  if (v.kind == LOOM_VALUE_INT_LIST && v.u.ints.size > 1)
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected one reduced dim, got %lld", name,
         static_cast<long long>(v.u.ints.size));
}

template <bool IsMax>
void with_indices(const LoomKernelCall& c, const char* name) {
  expect_arity(c, name, 1, 2);
  expect_values(c, name, 1);
  expect_one_dim(c, name);
  const int32_t dtypes[2] = {c.inputs[0].dtype, LOOM_DTYPE_INT64};
  reduce::Plan plan;
  reduce::prepare(c, name, 1, dtypes, 2, plan);
  dispatch<DTypes::All>(dtypes[0], name, [&](auto tag) {
    using T = decltype(tag);
    reduce::run(plan, plugin::data_ptr<const T>(c.inputs[0]),
                reduce::ArgOp<T, IsMax, true>{plugin::data_ptr<T>(c.outputs[0]),
                                              plugin::data_ptr<int64_t>(c.outputs[1])});
  });
}

template <bool IsMax>
void index_only(const LoomKernelCall& c, const char* name) {
  expect_arity(c, name, 1, 1);
  expect_values(c, name, 1);
  expect_one_dim(c, name);
  const int32_t dtype = LOOM_DTYPE_INT64;
  reduce::Plan plan;
  reduce::prepare(c, name, 1, &dtype, 1, plan);
  dispatch<DTypes::All>(c.inputs[0].dtype, name, [&](auto tag) {
    using T = decltype(tag);
    reduce::run(plan, plugin::data_ptr<const T>(c.inputs[0]),
                reduce::ArgOp<T, IsMax, false>{nullptr, plugin::data_ptr<int64_t>(c.outputs[0])});
  });
}

}  // namespace

void amax(const LoomKernelCall& c) { extreme<true>(c, "amax"); }
void amin(const LoomKernelCall& c) { extreme<false>(c, "amin"); }
void max_dim(const LoomKernelCall& c) { with_indices<true>(c, "max.dim"); }
void min_dim(const LoomKernelCall& c) { with_indices<false>(c, "min.dim"); }
void argmax(const LoomKernelCall& c) { index_only<true>(c, "argmax"); }
void argmin(const LoomKernelCall& c) { index_only<false>(c, "argmin"); }

}  // namespace loom::cpu
