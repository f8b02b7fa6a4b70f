// loom/indexing.h — tensor indexing with PyTorch's rules, as libtorch's
// torch::indexing and Python's t[...] (whose binding uses this too).
//
//   using namespace loom::indexing;
//   x.index({Slice(), 0});                  // x[:, 0]
//   x.index({Ellipsis, Slice(1, None, 2)}); // x[..., 1::2]
//   x.index({mask});                        // x[mask]
//   x.index_put_({0, Slice(None, 2)}, 1.5); // x[0, :2] = 1.5
//
// Integers, slices (positive steps), None (a new dim), ... and bools are
// applied first, as views; integer and bool tensors then index their dims
// through the core's advanced indexing (loom/ops/indexing.h), over that view.
// An integer next to an advanced index is still a select, as in PyTorch.
#pragma once

#include <loom/ops/indexing.h>
#include <loom/scalar.h>
#include <loom/tensor.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

namespace loom::indexing {

struct NoneIndexType {};
struct EllipsisIndexType {};
// `None` (libtorch's c10::nullopt spelling also works in a Slice).
inline constexpr NoneIndexType None{};
inline constexpr EllipsisIndexType Ellipsis{};

// start:stop:step; an absent part takes Python's default. Negative start /
// stop count from the end; the step must be positive.
struct Slice {
  Slice() = default;
  Slice(std::optional<int64_t> start, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start(start), stop(stop), step(step) {}
  Slice(NoneIndexType, std::optional<int64_t> stop = std::nullopt, std::optional<int64_t> step = std::nullopt)
      : stop(stop), step(step) {}
  Slice(std::optional<int64_t> start, NoneIndexType, std::optional<int64_t> step = std::nullopt)
      : start(start), step(step) {}
  Slice(NoneIndexType, NoneIndexType, std::optional<int64_t> step = std::nullopt) : step(step) {}
  std::optional<int64_t> start, stop, step;
};

class TensorIndex {
 public:
  enum Kind { Integer, SliceKind, NewAxis, EllipsisKind, Boolean, TensorKind };
  TensorIndex(int64_t i) : kind_(Integer), integer_(i) {}  // NOLINT: implicit, as libtorch's
  TensorIndex(int i) : kind_(Integer), integer_(i) {}      // NOLINT
  TensorIndex(bool b) : kind_(Boolean), flag_(b) {}        // NOLINT
  TensorIndex(Slice s) : kind_(SliceKind), slice_(s) {}    // NOLINT
  TensorIndex(NoneIndexType) : kind_(NewAxis) {}           // NOLINT
  TensorIndex(std::nullopt_t) : kind_(NewAxis) {}          // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(EllipsisKind) {}  // NOLINT
  TensorIndex(Tensor t) : kind_(TensorKind), tensor_(std::move(t)) {}  // NOLINT
  TensorIndex(const char* s);  // "..." only (libtorch's spelling of Ellipsis)

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  bool flag() const { return flag_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  bool flag_ = false;
  Slice slice_;
  Tensor tensor_;
};

// `self` with the basic part of `indices` applied as views, and the
// advanced part as per-dim entries over that view (has_advanced false when
// there is none). Throws loom::Error for a bad index (too many, two
// ellipses, an integer out of bounds, a floating index tensor).
struct Applied {
  Tensor view;
  TensorIndices advanced;
  bool has_advanced = false;
};
Applied apply(const Tensor& self, const std::vector<TensorIndex>& indices);


// self[indices] (a view, or an alias, when every index is basic), and
// self[indices] = value (value cast to self's dtype and device, broadcast).
// Tensor::index and Tensor::index_put_ call these.
Tensor get(const Tensor& self, const std::vector<TensorIndex>& indices);
void put(Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& value);
void put(Tensor& self, const std::vector<TensorIndex>& indices, Scalar value);

}  // namespace loom::indexing
