// conv_args.h (core-internal) — argument helpers shared by the convolution
// and pooling ops (ops_conv.cpp, ops_pool.cpp).
//
// Every op of the family hands its kernel the 2-D batched case: 4-D views
// [N, C, H, W] of input and output (conv1d is height 1, an unbatched input
// is N = 1; views, never copies) and every int[2] argument as a 2-element
// INT_LIST. These helpers read the user's lists (one element or one per
// spatial dim) and write the normalised ones into call.list_storage.
#pragma once

#include "core_op.h"

#include <loom/error.h>

#include <array>
#include <initializer_list>

namespace loom::detail {

using Pair = std::array<int64_t, 2>;

// `v` as a pair, once read_pair has checked it (derivative formulas read
// the user's values again).
inline Pair pair_of(const LoomValue& v, int spatial, int64_t neutral) {
  if (v.kind == LOOM_VALUE_INT) return spatial == 1 ? Pair{neutral, v.u.i} : Pair{v.u.i, v.u.i};
  const int64_t* d = v.u.ints.data;
  if (spatial == 1) return {neutral, d[0]};
  return v.u.ints.size == 1 ? Pair{d[0], d[0]} : Pair{d[0], d[1]};
}

// values[i] as a pair for an op with `spatial` (1 or 2) spatial dims: a list
// of 1 or `spatial` elements, or a single INT. For spatial == 1 the height
// entry is `neutral` (1 for stride/dilation/kernel, 0 for padding).
inline Pair read_pair(const OpCall& call, size_t i, int spatial, const char* arg,
                      int64_t neutral) {
  const LoomValue& v = call.values[i];
  const std::string_view op = call.op->name();
  if (v.kind != LOOM_VALUE_INT) {
    LOOM_CHECK(v.kind == LOOM_VALUE_INT_LIST, op, ": expected '", arg, "' to be an int list");
    const int64_t n = v.u.ints.size;
    LOOM_CHECK(n == 1 || n == spatial, op, ": expected '", arg, "' to have 1 or ", spatial,
               " elements, but got ", n);
  }
  return pair_of(v, spatial, neutral);
}

// Each pair of `pairs` must be > 0 (or >= 0 when allow_zero).
inline void check_positive(std::string_view op, const char* arg, const Pair& p, int spatial,
                           bool allow_zero = false) {
  for (int d = 2 - spatial; d < 2; ++d) {
    const bool ok = allow_zero ? p[static_cast<size_t>(d)] >= 0 : p[static_cast<size_t>(d)] > 0;
    LOOM_CHECK(ok, op, ": expected '", arg, "' to be ", allow_zero ? "non-negative" : "positive",
               ", but got ", spatial == 1 ? std::to_string(p[1]) : shape_str({p[0], p[1]}));
  }
}

// Rewrites values[idx[k]] to the 2-element list pairs[k], backed by
// call.list_storage (filled whole before any pointer is taken).
inline void set_pairs(OpCall& call, std::initializer_list<size_t> idx,
                      std::initializer_list<Pair> pairs) {
  call.list_storage.clear();
  for (const Pair& p : pairs) {
    call.list_storage.push_back(p[0]);
    call.list_storage.push_back(p[1]);
  }
  size_t k = 0;
  for (size_t i : idx) {
    call.values[i] = int_list_value(IntArrayRef(call.list_storage.data() + 2 * k, 2));
    ++k;
  }
}

// A 4-D view [N, C, H, W] of a tensor of `spatial` spatial dims, batched or
// not; returns it through call.make_view.
inline View as_nchw(OpCall& call, const TensorImpl& t, int spatial) {
  const int64_t nd = t.dim();
  const bool batched = nd == spatial + 2;
  int64_t sz[4], st[4];
  const IntArrayRef s = t.sizes(), r = t.strides();
  int64_t k = 0;
  // Missing dims get size 1 and the stride a dense layout would give them.
  const int64_t outer = nd > 0 ? s[0] * r[0] : 1;
  sz[0] = batched ? s[k] : 1;
  st[0] = batched ? r[k++] : outer;
  sz[1] = s[k];
  st[1] = r[k++];
  if (spatial == 1) {
    sz[2] = 1;
    st[2] = s[k] * r[k];
  } else {
    sz[2] = s[k];
    st[2] = r[k++];
  }
  sz[3] = s[k];
  st[3] = r[k];
  return call.make_view(IntArrayRef(sz, 4), IntArrayRef(st, 4));
}

// The output plan for `sizes` (the user-visible shape, `spatial` spatial dims,
// batched or not) whose kernel view is the contiguous [N, C, H, W] form.
inline OutputPlan& add_nchw_output(OpCall& call, DType dtype, int64_t n, int64_t c, int64_t h,
                                   int64_t w, bool batched, int spatial) {
  auto& plan = call.outputs.emplace_back();
  plan.dtype = dtype;
  if (batched) plan.sizes.push_back(n);
  plan.sizes.push_back(c);
  if (spatial == 2) plan.sizes.push_back(h);
  plan.sizes.push_back(w);
  const int64_t k[4] = {n, c, h, w};
  plan.kernel_view = call.make_view(IntArrayRef(k, 4), contiguous_strides(IntArrayRef(k, 4)));
  return plan;
}

}  // namespace loom::detail
