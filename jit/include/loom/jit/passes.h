// loom/jit/passes.h — graph rewrites, each keeping the graph's results those
// of the unoptimised graph (a differential test over the op samples checks
// it). Each returns how many nodes it removed or rewired.
//
// What none of them touches: a node that writes its input in place (add_,
// fill_ ...), a node that draws random numbers (it has a Generator
// argument: removing or merging one would shift the numbers every later
// one draws), and a value an in-place node writes, directly or through
// views of it (SSA values do not see aliasing: folding or merging such a
// value could read it before or after the write).
#pragma once

#include <loom/jit/graph.h>

namespace loom::jit {

// Nodes none of whose results is used (and that neither write in place nor
// draw random numbers), then constants nothing uses.
size_t eliminate_dead_code(Graph& g);
// Nodes whose tensor inputs are all constants run once, now; their results
// become constants. View ops are left (a view of a constant costs nothing
// and folding it would copy it into the file).
size_t fold_constants(Graph& g);
// A node equal to an earlier one (same op, inputs and arguments) reuses the
// earlier one's results; an in-place node in between ends the search.
size_t eliminate_common_subexpressions(Graph& g);
// Algebra that leaves a value as it was: x * 1, x / 1, x + 0, x - 0 (the
// constant all ones or zeros, the result of x's type and shape), a view or
// expand to x's own shape, t(t(x)), transpose of a transpose of the same two
// dims, a permute that undoes the previous one.
size_t simplify(Graph& g);

// Elementwise fusion: maximal regions of elementwise ops (unary, binary,
// comparisons, where, casts, clamp, activations — plugin_api.h's
// LOOM_FUSED_OP_LIST) over one shape, whose intermediates nothing outside
// the region reads, become one `_fused` node whose body is those ops as a
// graph. Running it offers the region to the device (its fused_* slots):
// one compiled pass over the data where the device accepts, the body op
// by op where it declines or where autograd records. Returns how many
// nodes went.
size_t fuse_elementwise(Graph& g);

// simplify, fold_constants, eliminate_common_subexpressions and
// eliminate_dead_code, in that order, repeated while any of them changes
// something (at most 8 rounds); then fuse_elementwise; validates the
// result. Returns the total.
size_t optimize(Graph& g);

// Freezing, as torch.jit.freeze: for inference only, and not run by
// optimize (folding changes results by rounding).
//
// Parameters become constants (detached), but for one an in-place node
// writes; a batch_norm in training mode is refused (trace in eval mode).
// Returns how many parameters were frozen.
size_t freeze_parameters(Graph& g);
// A conv1d, conv2d or 2-D linear whose only reader is a batch_norm in
// evaluation mode, all their tensors constants, becomes that layer alone
// with the normalisation folded into its weight and bias: W·s and
// (b − mean)·s + β per output channel, s = γ/√(var + ε), computed in
// float64 and rounded once to the weight's dtype. Returns how many
// batch_norms went.
size_t fold_batch_norm(Graph& g);
// freeze_parameters, fold_batch_norm, then optimize; returns the total.
size_t freeze(Graph& g);

}  // namespace loom::jit
