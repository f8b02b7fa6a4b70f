// ops_advanced_index.cpp — advanced indexing, self[indices] and
// self[indices] = values, as composites of catalog ops (so every device that
// has index_select / scatter_ / scatter_add_ gets them, and autograd later
// gets them for free).
//
// The indexed ("advanced") dims are folded into one: each index tensor is
// bounds-checked and wrapped, then they are combined into one linear index
// over the indexed dims (row-major), and the op becomes index_select (or
// scatter_/scatter_add_) along that merged dim. When the advanced dims are
// not adjacent they are first moved to the front, which is where PyTorch puts
// the broadcast index shape in that case.
//
// These are host-side compositions rather than catalog ops because an OpCall
// carries no tensor lists; index_select, scatter_ and scatter_add_ are.
#include "ops_indexing_util.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <algorithm>
#include <optional>

namespace loom {
namespace {

// The indexing problem after masks are expanded and indices are checked.
struct Plan {
  std::vector<int64_t> adv;  // the advanced dims, increasing
  Tensor linear;             // int64, the broadcast index shape: row-major index into the advanced dims
  DimVector index_shape;     // that broadcast shape
  bool adjacent = true;
  Tensor base;               // self, with a size-1 dim for each 0-d mask
  Tensor src;                // base, advanced dims moved to the front when not adjacent
  int64_t axis = 0;          // where the merged dim sits in `src`'s merged form
};

int64_t product(IntArrayRef s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e; ++i) p *= s[i];
  return p;
}

Tensor permuted(const Tensor& t, const std::vector<int64_t>& perm) {
  DimVector sizes, strides;
  for (int64_t d : perm) {
    sizes.push_back(t.sizes()[static_cast<size_t>(d)]);
    strides.push_back(t.strides()[static_cast<size_t>(d)]);
  }
  return t.as_strided(sizes, strides);
}

// The bound-checked, wrapped int64 index for dim `d` of size `size`, on
// self's device (indices may live elsewhere, as in PyTorch).
Tensor checked_index(const char* op, const Tensor& idx, int64_t d, int64_t size, Device device) {
  Tensor t = idx.to(device, DType::Int64);
  if (t.numel() == 0) return t;
  const int64_t hi = amax(t).item<int64_t>();
  const int64_t lo = amin(t).item<int64_t>();
  LOOM_CHECK(hi < size, op, ": index ", hi, " is out of bounds for dimension ", d, " with size ", size);
  LOOM_CHECK(lo >= -size, op, ": index ", lo, " is out of bounds for dimension ", d, " with size ", size);
  return lo < 0 ? remainder(t, Scalar(size)) : t;
}

Plan make_plan(const char* op, const Tensor& self_in, const TensorIndices& indices) {
  // A 0-d mask adds a dim of size 1 (kept when true, emptied when false), so
  // `self` may grow by views of self_in.
  Tensor self = self_in;
  int64_t nd = self.dim();
  std::vector<std::optional<Tensor>> per_dim(static_cast<size_t>(nd));
  int64_t pos = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i] || !indices[i]->defined()) {
      LOOM_CHECK(pos < nd, op, ": too many indices for a ", nd, "-d tensor (", indices.size(), " given)");
      ++pos;
      continue;
    }
    const Tensor& e = *indices[i];
    const DType t = e.dtype();
    if ((t == DType::Bool || t == DType::UInt8) && e.dim() == 0) {
      LOOM_CHECK(pos <= nd, op, ": too many indices for a ", self_in.dim(), "-d tensor (", indices.size(), " given)");
      self = self.unsqueeze(pos);
      ++nd;
      per_dim.insert(per_dim.begin() + pos, nonzero(e.reshape({1})).select(1, 0));
      ++pos;
      continue;
    }
    if (t == DType::Bool || t == DType::UInt8) {
      LOOM_CHECK(pos + e.dim() <= nd, op, ": too many indices for a ", nd, "-d tensor (the mask indices[", i,
                 "] has ", e.dim(), " dimensions)");
      for (int64_t k = 0; k < e.dim(); ++k)
        LOOM_CHECK(e.sizes()[k] == self.sizes()[pos + k], op, ": the shape of the mask indices[", i, "] ",
                   shape_str(e.sizes()), " does not match the shape of the indexed tensor ",
                   shape_str(self.sizes()), " at index ", k, " (dimension ", pos + k, ")");
      const Tensor nz = nonzero(e);
      for (int64_t k = 0; k < e.dim(); ++k) per_dim[static_cast<size_t>(pos++)] = nz.select(1, k);
      continue;
    }
    LOOM_CHECK(t == DType::Int64 || t == DType::Int32, op,
               ": tensors used as indices must be int64, int32, bool or uint8; indices[", i, "] is ", name(t));
    LOOM_CHECK(pos < nd, op, ": too many indices for a ", nd, "-d tensor (", indices.size(), " given)");
    per_dim[static_cast<size_t>(pos++)] = e;
  }

  Plan p;
  for (int64_t d = 0; d < nd; ++d) {
    const auto& idx = per_dim[static_cast<size_t>(d)];
    if (!idx) continue;
    p.index_shape = p.adv.empty() ? DimVector(idx->sizes()) : broadcast_shapes(op, p.index_shape, idx->sizes());
    p.adv.push_back(d);
  }
  if (p.adv.empty()) return p;
  for (int64_t d : p.adv) {
    const int64_t size = self.sizes()[static_cast<size_t>(d)];
    Tensor t = checked_index(op, *per_dim[static_cast<size_t>(d)], d, size, self.device());
    p.linear = p.linear.defined() ? p.linear * Scalar(size) + t : t;
  }
  p.linear = p.linear.expand(p.index_shape);
  p.adjacent = p.adv.back() - p.adv.front() + 1 == static_cast<int64_t>(p.adv.size());
  p.base = self;
  if (p.adjacent) {
    p.src = self;
    p.axis = p.adv.front();
  } else {
    std::vector<int64_t> perm = p.adv;
    for (int64_t d = 0; d < nd; ++d)
      if (std::find(p.adv.begin(), p.adv.end(), d) == p.adv.end()) perm.push_back(d);
    p.src = permuted(self, perm);
    p.axis = 0;
  }
  return p;
}

// src's shape with its advanced dims [axis, axis + k) merged into one of size `merged`.
DimVector merged_shape(const Plan& p, int64_t merged) {
  const IntArrayRef s = p.src.sizes();
  const size_t a = static_cast<size_t>(p.axis), k = p.adv.size();
  DimVector out(s.begin(), s.begin() + a);
  out.push_back(merged);
  for (size_t d = a + k; d < s.size(); ++d) out.push_back(s[d]);
  return out;
}

// The indexing result's shape: src's with the advanced dims replaced by the index shape.
DimVector result_shape(const Plan& p) {
  const IntArrayRef s = p.src.sizes();
  const size_t a = static_cast<size_t>(p.axis), k = p.adv.size();
  DimVector out(s.begin(), s.begin() + a);
  for (int64_t v : p.index_shape) out.push_back(v);
  for (size_t d = a + k; d < s.size(); ++d) out.push_back(s[d]);
  return out;
}

// A view of t with dims [a, a + k) merged, when their strides allow one.
std::optional<Tensor> merged_view(const Tensor& t, size_t a, size_t k) {
  const IntArrayRef s = t.sizes(), st = t.strides();
  int64_t stride = 1;
  bool first = true;
  for (size_t d = a + k; d-- > a;) {
    if (s[d] == 1) continue;
    if (!first && st[d] != stride) return std::nullopt;
    stride = st[d] * s[d];
    first = false;
  }
  // Stride of the merged dim: that of its innermost non-1 dim.
  int64_t inner = 1;
  for (size_t d = a + k; d-- > a;)
    if (s[d] != 1) {
      inner = st[d];
      break;
    }
  DimVector sizes(s.begin(), s.begin() + a), strides(st.begin(), st.begin() + a);
  sizes.push_back(static_cast<int64_t>(product(s, a, a + k)));
  strides.push_back(inner);
  for (size_t d = a + k; d < s.size(); ++d) {
    sizes.push_back(s[d]);
    strides.push_back(st[d]);
  }
  return t.as_strided(sizes, strides);
}

// The merged linear index read as `shape`: stride 0 but along `axis`.
Tensor index_over(const Plan& p, IntArrayRef shape) {
  const Tensor flat = p.linear.contiguous().view({-1});
  DimVector strides(shape.size(), 0);
  strides[static_cast<size_t>(p.axis)] = 1;
  return flat.as_strided(shape, strides);
}

}  // namespace

Tensor index(const Tensor& self, const TensorIndices& indices) {
  const Plan p = make_plan("index", self, indices);
  if (p.adv.empty()) return self;
  const size_t a = static_cast<size_t>(p.axis), k = p.adv.size();
  const Tensor src = p.src.reshape(merged_shape(p, product(p.src.sizes(), a, a + k)));
  const Tensor r = index_select(src, p.axis, p.linear.reshape({-1}));
  return r.view(result_shape(p));
}

Tensor& index_put_(Tensor& self, const TensorIndices& indices, const Tensor& values, bool accumulate) {
  const char* op = "index_put_";
  LOOM_CHECK(values.dtype() == self.dtype(), op, ": expected values to have self's dtype ", name(self.dtype()),
             ", got ", name(values.dtype()));
  const Plan p = make_plan(op, self, indices);
  if (p.adv.empty()) {  // self[...] = values
    self.copy_(values);
    return self;
  }
  const size_t a = static_cast<size_t>(p.axis), k = p.adv.size();
  const DimVector rshape = result_shape(p);
  const DimVector b = broadcast_shapes(op, rshape, values.sizes());
  LOOM_CHECK(IntArrayRef(b) == IntArrayRef(rshape), op, ": values of shape ", shape_str(values.sizes()),
             " cannot be broadcast to the indexing result of shape ", shape_str(rshape));
  if (shape_numel(rshape) == 0) return self;  // nothing selected, nothing to write
  const DimVector kshape = merged_shape(p, shape_numel(p.index_shape));
  const Tensor v = values.expand(rshape).reshape(kshape);
  const Tensor idx = index_over(p, kshape);
  // Write through a view of self when the advanced dims merge; else into a
  // contiguous copy that is copied back.
  std::optional<Tensor> dst = merged_view(p.src, a, k);
  Tensor staged;
  if (!dst) {
    staged = p.src.contiguous();
    dst = merged_view(staged, a, k);
  }
  if (accumulate) scatter_add_(*dst, p.axis, idx, v);
  else scatter_(*dst, p.axis, idx, v);
  if (staged.defined()) {
    Tensor target = p.src;
    target.copy_(staged);
  }
  return self;
}

Tensor index_put(const Tensor& self, const TensorIndices& indices, const Tensor& values, bool accumulate) {
  Tensor out = self.clone();
  index_put_(out, indices, values, accumulate);
  return out;
}

}  // namespace loom
