// samples_views.cpp — the view ops of the catalog (view, permute, transpose,
// t, unsqueeze, squeeze, expand, select, narrow, slice, as_strided, detach)
// and clone / contiguous: the ops a graph capture records for the view
// functions. All exact; view and as_strided depend on their input's layout,
// so theirs is kept contiguous.
#include "sample_util.h"

namespace loom::opinfo {
namespace {
using namespace detail;

Sample contiguous_input(Sample s) {
  s.keep_layout = {0};
  return s;
}

LOOM_OP_SAMPLES("view", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      // gradcheck also runs its samples strided: inserting a size-1 dim is a
      // view of any layout.
      return Samples{contiguous_input(c.call("merge dims", {c.tensor({2, 3, 4})}, {L({6, 4})})),
                     c.call("insert a size-1 dim", {c.tensor({3, 4})}, {L({3, 1, 4})}).for_gradcheck(),
                     contiguous_input(c.call("-1 inferred", {c.tensor({4, 6})}, {L({-1, 3})})),
                     contiguous_input(c.call("to 0-d", {c.tensor({1})}, {L({})})),
                     contiguous_input(c.call("empty", {c.tensor({0, 4})}, {L({4, 0})}))};
    }})

LOOM_OP_SAMPLES("permute", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("3-d", {c.tensor({2, 3, 4})}, {L({2, 0, 1})}).for_gradcheck(),
                     c.call("negative dims", {c.tensor({3, 5})}, {L({-1, 0})}),
                     c.call("0-d", {c.tensor({})}, {L({})})};
    }})

LOOM_OP_SAMPLES("transpose.int", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("2-d", {c.tensor({3, 5})}, {I(0), I(1)}).for_gradcheck(),
                     c.call("3-d, last two", {c.tensor({2, 3, 4})}, {I(-1), I(-2)})};
    }})

LOOM_OP_SAMPLES("t", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("2-d", {c.tensor({3, 5})}).for_gradcheck(), c.call("1-d", {c.tensor({4})})};
    }})

LOOM_OP_SAMPLES("unsqueeze", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("front", {c.tensor({3, 4})}, {I(0)}).for_gradcheck(), c.call("back, negative", {c.tensor({3, 4})}, {I(-1)}),
                     c.call("0-d", {c.tensor({})}, {I(0)})};
    }})

LOOM_OP_SAMPLES("squeeze.dim", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("size-1 dim", {c.tensor({3, 1, 4})}, {I(1)}).for_gradcheck(),
                     c.call("not size 1 (unchanged)", {c.tensor({3, 4})}, {I(0)})};
    }})

LOOM_OP_SAMPLES("expand", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("size-1 dim", {c.tensor({3, 1})}, {L({3, 4})}).for_gradcheck(),
                     c.call("new leading dims, -1 kept", {c.tensor({4})}, {L({2, 3, -1})})};
    }})

LOOM_OP_SAMPLES("select.int", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("dim 0", {c.tensor({4, 5})}, {I(0), I(2)}).for_gradcheck(),
                     c.call("last dim, negative index", {c.tensor({2, 3, 4})}, {I(-1), I(-1)})};
    }})

LOOM_OP_SAMPLES("narrow", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("middle", {c.tensor({6, 4})}, {I(0), I(1), I(3)}).for_gradcheck(),
                     c.call("negative start", {c.tensor({3, 7})}, {I(1), I(-3), I(2)})};
    }})

LOOM_OP_SAMPLES("slice.Tensor", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("step 2", {c.tensor({8, 3})}, {I(0), I(1), I(7), I(2)}).for_gradcheck(),
                     c.call("open ends", {c.tensor({3, 5})}, {I(1), None(), None(), I(1)}),
                     c.call("negative bounds", {c.tensor({10})}, {I(0), I(-4), I(-1), I(1)})};
    }})

LOOM_OP_SAMPLES("as_strided", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{contiguous_input(c.call("overlapping windows", {c.tensor({10})}, {L({4, 3}), L({2, 1}), None()}).for_gradcheck()),
                     contiguous_input(c.call("with offset", {c.tensor({4, 4})}, {L({2, 2}), L({4, 1}), I(5)}))};
    }})

LOOM_OP_SAMPLES("detach", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) { return Samples{c.call("2-d", {c.tensor({3, 4})})}; }})

LOOM_OP_SAMPLES("clone", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("2-d", {c.tensor({3, 4})}).for_gradcheck(), c.call("0-d", {c.tensor({})})};
    }})

LOOM_OP_SAMPLES("contiguous", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) { return Samples{c.call("2-d", {c.tensor({3, 4})}).for_gradcheck()}; }})

LOOM_OP_SAMPLES("_to_copy", {
    .dtypes = kAllDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) {
      return Samples{c.call("to float64", {c.tensor({3, 4})}, {D(DType::Float64), None()}).for_gradcheck(),
                     c.call("to int32", {c.tensor({5})}, {D(DType::Int32), None()}),
                     c.call("same dtype (a copy)", {c.tensor({2, 2})}, {None(), None()})};
    }})

}  // namespace
}  // namespace loom::opinfo
