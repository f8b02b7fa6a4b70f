// ops_shape_views.cpp — the view ops of loom/ops/shape.h: permute, t,
// flatten, unflatten, movedim, slice, split, chunk, unbind. Each is sizes,
// strides and an offset over the base's storage (as_strided), so it needs no
// kernel on any device and a write through the view shows in the base.
#include <loom/autograd.h>
#include <loom/error.h>
#include <loom/op_call.h>
#include <loom/ops.h>

#include "core_op.h"
#include "view_ops.h"

#include <algorithm>

namespace loom {

namespace {
// A dims list wrapped to [0, ndim) and checked for repeats.
DimVector wrap_dims(std::string_view op, IntArrayRef dims, int64_t ndim) {
  DimVector out;
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(op, d, ndim);
    LOOM_CHECK(!seen[w], op, ": dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    out.push_back(w);
  }
  return out;
}
}  // namespace

Tensor permute(const Tensor& a, IntArrayRef dims) {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("permute", a, {detail::int_list_value(dims)});
  LOOM_CHECK(static_cast<int64_t>(dims.size()) == a.dim(), "permute: number of dims don't match: got ",
             dims.size(), " dims ", shape_str(dims), " for a ", a.dim(), "-d tensor");
  const DimVector order = wrap_dims("permute", dims, a.dim());
  DimVector sz, st;
  for (int64_t d : order) {
    sz.push_back(a.sizes()[d]);
    st.push_back(a.strides()[d]);
  }
  return detail::make_view(a, sz, st, a.storage_offset(), "PermuteBackward0");
}

Tensor t(const Tensor& a) { return a.t(); }

Tensor flatten(const Tensor& a, int64_t start_dim, int64_t end_dim) {
  const int64_t s = wrap_dim("flatten", start_dim, a.dim());
  const int64_t e = wrap_dim("flatten", end_dim, a.dim());
  LOOM_CHECK(s <= e, "flatten: start_dim (", start_dim, ") cannot come after end_dim (", end_dim, ")");
  if (a.dim() == 0) return a.reshape({1});
  if (s == e) return a;
  DimVector shape;
  for (int64_t d = 0; d < s; ++d) shape.push_back(a.sizes()[d]);
  int64_t merged = 1;
  for (int64_t d = s; d <= e; ++d) merged *= a.sizes()[d];
  shape.push_back(merged);
  for (int64_t d = e + 1; d < a.dim(); ++d) shape.push_back(a.sizes()[d]);
  return a.reshape(shape);
}

Tensor unflatten(const Tensor& a, int64_t dim, IntArrayRef sizes) {
  const int64_t d = wrap_dim("unflatten", dim, a.dim());
  LOOM_CHECK(a.dim() > 0, "unflatten: cannot unflatten a 0-d tensor");
  LOOM_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      LOOM_CHECK(infer_at < 0, "unflatten: only one dimension can be inferred (-1), got sizes ",
                 shape_str(sizes));
      infer_at = static_cast<int64_t>(i);
    } else {
      LOOM_CHECK(sizes[i] >= 0, "unflatten: invalid size ", sizes[i], " in ", shape_str(sizes));
      known *= sizes[i];
    }
  }
  const int64_t n = a.sizes()[d];
  DimVector piece(sizes);
  if (infer_at >= 0) {
    LOOM_CHECK(known != 0 && n % known == 0, "unflatten: sizes ", shape_str(sizes),
               " cannot split dimension ", d, " of size ", n);
    piece[infer_at] = n / known;
  }
  LOOM_CHECK(shape_numel(piece) == n, "unflatten: provided sizes ", shape_str(sizes),
             " don't multiply up to the size of dim ", d, " (", n, ") in the input tensor");
  DimVector shape;
  for (int64_t i = 0; i < a.dim(); ++i) {
    if (i == d) for (int64_t p : piece) shape.push_back(p);
    else shape.push_back(a.sizes()[i]);
  }
  return a.view(shape);  // splitting one dim is always a view
}

Tensor movedim(const Tensor& a, IntArrayRef source, IntArrayRef destination) {
  LOOM_CHECK(source.size() == destination.size(), "movedim: Invalid source or destination dims: source (",
             shape_str(source), ") and destination (", shape_str(destination),
             ") must have the same number of elements");
  const int64_t nd = a.dim();
  const DimVector src = wrap_dims("movedim", source, nd);
  const DimVector dst = wrap_dims("movedim", destination, nd);
  if (nd == 0) return a;
  // Destinations are filled from source; the remaining dims keep their order.
  std::vector<int64_t> order(static_cast<size_t>(nd), -1);
  std::vector<bool> used(static_cast<size_t>(nd), false);
  for (size_t i = 0; i < src.size(); ++i) {
    order[dst[i]] = src[i];
    used[src[i]] = true;
  }
  int64_t next = 0;
  for (auto& o : order) {
    if (o >= 0) continue;
    while (used[next]) ++next;
    o = next++;
  }
  return permute(a, IntArrayRef(order.data(), order.size()));
}

Tensor movedim(const Tensor& a, int64_t source, int64_t destination) {
  return movedim(a, IntArrayRef(&source, 1), IntArrayRef(&destination, 1));
}

Tensor slice(const Tensor& a, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step) {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("slice.Tensor", a,
                             {detail::int_value(dim), start ? detail::int_value(*start) : detail::none_value(),
                              end ? detail::int_value(*end) : detail::none_value(), detail::int_value(step)});
  LOOM_CHECK(a.dim() > 0, "slice: cannot slice a 0-d tensor");
  const int64_t d = wrap_dim("slice", dim, a.dim());
  LOOM_CHECK(step > 0, "slice: step must be positive, got ", step);
  const int64_t n = a.sizes()[d];
  auto clamp_bound = [n](int64_t v) {
    if (v < 0) v += n;
    return std::clamp<int64_t>(v, 0, n);
  };
  const int64_t s = clamp_bound(start.value_or(0));
  const int64_t e = std::max(s, clamp_bound(end.value_or(n)));
  DimVector sz(a.sizes()), st(a.strides());
  sz[d] = (e - s + step - 1) / step;
  st[d] *= step;
  return detail::make_view(a, sz, st, a.storage_offset() + s * a.strides()[d], "SliceBackward0");
}

namespace {
// Piece [start, start + length) of dim d: a view with no node of its own
// (record_pieces makes one for all of them).
Tensor piece(const Tensor& a, int64_t d, int64_t start, int64_t length) {
  if (detail::capturing()) [[unlikely]] return a.narrow(d, start, length);  // a capture records narrow
  DimVector sz(a.sizes());
  sz[static_cast<size_t>(d)] = length;
  return detail::make_view(a, sz, a.strides(), a.storage_offset() + start * a.strides()[d], nullptr);
}

// One node for all the pieces of `a` along dim d, named as PyTorch names the
// op that cut them (SplitBackward0 ...): its backward writes every piece's
// gradient into one tensor (cat, or stack for unbind's pieces, which lost
// the dim), zeros for a piece that got none — not a zero-filled base per
// piece, summed.
std::vector<Tensor> record_pieces(const Tensor& a, std::vector<Tensor> pieces, int64_t d, const char* name,
                                  bool dim_removed) {
  autograd::record_custom_function(
      name, {a}, pieces,
      [d, dim_removed, dtype = a.dtype(), device = a.device(),
       shapes = [&] {
         std::vector<DimVector> v;
         for (const Tensor& p : pieces) v.emplace_back(p.sizes());
         return v;
       }()](const std::vector<Tensor>& grads) -> std::vector<Tensor> {
        std::vector<Tensor> parts;
        parts.reserve(grads.size());
        for (size_t i = 0; i < grads.size(); ++i)
          parts.push_back(grads[i].defined() ? grads[i] : loom::zeros(shapes[i], dtype, device));
        if (parts.empty()) return {Tensor()};
        return {dim_removed ? loom::stack(parts, d) : loom::cat(parts, d)};
      });
  return pieces;
}
}  // namespace

std::vector<Tensor> split(const Tensor& a, IntArrayRef split_sizes, int64_t dim) {
  LOOM_CHECK(a.dim() > 0, "split_with_sizes: cannot split a 0-d tensor");
  const int64_t d = wrap_dim("split_with_sizes", dim, a.dim());
  const int64_t n = a.sizes()[d];
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    LOOM_CHECK(s >= 0, "split_with_sizes: split_sizes must be non-negative, got ", shape_str(split_sizes));
    total += s;
  }
  LOOM_CHECK(total == n, "split_with_sizes: expects split_sizes to sum exactly to ", n,
             " (input tensor's size at dimension ", d, "), but got split_sizes=", shape_str(split_sizes));
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : split_sizes) {
    out.push_back(piece(a, d, at, s));
    at += s;
  }
  return record_pieces(a, std::move(out), d, "SplitWithSizesBackward0", false);
}

std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim) {
  LOOM_CHECK(a.dim() > 0, "split: cannot split a 0-d tensor");
  const int64_t d = wrap_dim("split", dim, a.dim());
  const int64_t n = a.sizes()[d];
  LOOM_CHECK(split_size >= 0, "split: split_size must be non-negative, got ", split_size);
  LOOM_CHECK(split_size > 0 || n == 0, "split: split_size can only be 0 if dimension size is 0, but got dimension ",
             d, " of size ", n);
  const int64_t pieces = split_size == 0 ? 1 : std::max<int64_t>((n + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < pieces; ++i) {
    const int64_t start = i * split_size;
    out.push_back(piece(a, d, start, std::max<int64_t>(std::min(split_size, n - start), 0)));
  }
  return record_pieces(a, std::move(out), d, "SplitBackward0", false);
}

std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  LOOM_CHECK(a.dim() > 0, "chunk: expects at least a 1-dimensional tensor");
  LOOM_CHECK(chunks > 0, "chunk: chunks must be greater than 0, got ", chunks);
  const int64_t d = wrap_dim("chunk", dim, a.dim());
  const int64_t n = a.sizes()[d];
  const int64_t size = (n + chunks - 1) / chunks;
  // PyTorch: an empty dim gives `chunks` empty pieces, not one.
  if (size == 0) return split(a, DimVector(static_cast<size_t>(chunks), 0), d);
  return split(a, size, d);
}

std::vector<Tensor> unbind(const Tensor& a, int64_t dim) {
  LOOM_CHECK(a.dim() > 0, "unbind: dimension specified as ", dim, " but tensor has no dimensions");
  const int64_t d = wrap_dim("unbind", dim, a.dim());
  std::vector<Tensor> out;
  DimVector sz(a.sizes()), st(a.strides());
  sz.erase(static_cast<size_t>(d));
  st.erase(static_cast<size_t>(d));
  for (int64_t i = 0; i < a.sizes()[d]; ++i)
    out.push_back(detail::capturing() ? a.select(d, i)  // a capture records select
                                      : detail::make_view(a, sz, st, a.storage_offset() + i * a.strides()[d], nullptr));
  return record_pieces(a, std::move(out), d, "UnbindBackward0", true);
}

}  // namespace loom
