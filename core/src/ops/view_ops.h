// view_ops.h (core-internal) — the view functions, clone and contiguous as
// catalog ops, for graph capture (ops_view_ops.cpp).
//
// Eager code makes views directly (sizes, strides and an offset over the
// base: no dispatch, no kernel). While a DispatchObserver watches the
// thread (loom/dispatch_observer.h), each view function instead runs as its
// catalog op (view, permute, transpose.int, t, unsqueeze, squeeze.dim,
// expand, select.int, narrow, slice.Tensor, as_strided, detach; and clone,
// contiguous and _to_copy (to(dtype), to(device)), which eager code runs as
// empty + copy_), whose composite is the
// same function, so a capture records the view with its arguments —
// "view(%x, size=[-1, 64])" — rather than the strides it happened to have,
// and a copy as one node rather than a fresh tensor and a copy_ into it.
#pragma once

#include <loom/dispatch_observer.h>
#include <loom/tensor.h>

#include <initializer_list>

namespace loom::detail {

// One load of the thread-local the dispatcher reads anyway.
inline bool capturing() { return active_observer != nullptr; }

// Runs the op `op` (a catalog name) on self with `values`; returns its
// result. Only called while capturing.
Tensor run_as_op(const char* op, const Tensor& self, std::initializer_list<LoomValue> values);

}  // namespace loom::detail
