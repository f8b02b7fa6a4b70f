// CPU sort and topk: rows along `dim` run in parallel; each row is gathered
// into (key, index) pairs, ordered with std::sort (sort), or for topk with
// partial_sort (k <= n/64) or nth_element plus a sort of the k winners, and
// scattered to the outputs. Keys of 16-bit floats are floats. NaN orders above every number; equal keys keep
// index order, so results are deterministic (and stable).
// Contracts: docs/kernel_conventions.md, "Shape".
#include "common.hpp"
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

namespace loom::cpu {
namespace {

template <class T>
using key_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <class K>
inline bool is_nan(K v) {
  if constexpr (std::is_floating_point_v<K>) return std::isnan(v);
  else return false;
}

// Strict weak orders on (key, index): "a comes first".
template <class K>
struct Ascending {
  bool operator()(const std::pair<K, int64_t>& a, const std::pair<K, int64_t>& b) const {
    if (a.first < b.first) return true;
    if (b.first < a.first) return false;
    const bool na = is_nan(a.first), nb = is_nan(b.first);
    if (na != nb) return nb;  // a number before NaN
    return a.second < b.second;
  }
};
template <class K>
struct Descending {
  bool operator()(const std::pair<K, int64_t>& a, const std::pair<K, int64_t>& b) const {
    if (b.first < a.first) return true;
    if (a.first < b.first) return false;
    const bool na = is_nan(a.first), nb = is_nan(b.first);
    if (na != nb) return na;  // NaN before a number
    return a.second < b.second;
  }
};

// Element offsets of row r (every dim but `dim`) in a tensor of `shape` with `strides`.
inline int64_t row_offset(int64_t r, int32_t nd, const int64_t* shape, const int64_t* strides, int32_t dim) {
  int64_t off = 0;
  for (int32_t d = nd - 1; d >= 0; --d) {
    if (d == dim) continue;
    off += (r % shape[d]) * strides[d];
    r /= shape[d];
  }
  return off;
}

// Sorts (k == n) or selects the best k of every row.
template <class T>
void select_rows(const LoomTensorDesc& in, const LoomTensorDesc& values, const LoomTensorDesc& indices,
                 int32_t dim, int64_t k, bool descending, bool full_sort, bool sorted) {
  using K = key_t<T>;
  const int32_t nd = in.ndim;
  const int64_t n = nd == 0 ? 1 : in.shape[dim];
  int64_t rows = 1;
  for (int32_t d = 0; d < nd; ++d)
    if (d != dim) rows *= in.shape[d];
  if (rows == 0 || n == 0) return;
  const int64_t one = 1;
  const int64_t is = nd == 0 ? one : in.strides[dim];
  const int64_t vs = nd == 0 ? one : values.strides[dim];
  const int64_t xs = nd == 0 ? one : indices.strides[dim];
  const T* src = plugin::data_ptr<const T>(in);
  T* vdst = plugin::data_ptr<T>(values);
  int64_t* idst = plugin::data_ptr<int64_t>(indices);
  // Sorting costs ~n log n per row: a row of a few thousand elements is
  // already worth a thread.
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (4 * n));
  parallel_for(rows, grain, [&](int64_t rb, int64_t re) {
    std::vector<std::pair<K, int64_t>> buf(static_cast<size_t>(n));
    for (int64_t r = rb; r < re; ++r) {
      const T* irow = src + row_offset(r, nd, in.shape, in.strides, dim);
      T* vrow = vdst + row_offset(r, nd, values.shape, values.strides, dim);
      int64_t* xrow = idst + row_offset(r, nd, indices.shape, indices.strides, dim);
      for (int64_t j = 0; j < n; ++j) buf[j] = {static_cast<K>(irow[j * is]), j};
      auto order = [&](auto cmp) {
        if (full_sort) {
          std::sort(buf.begin(), buf.end(), cmp);
        } else if (k > 0 && k * 64 <= n) {
          // Small k: a k-element heap rejects most elements with one
          // comparison, cheaper than nth_element's partitioning passes.
          std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), cmp);
        } else if (k > 0) {
          std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.end(), cmp);
          if (sorted) std::sort(buf.begin(), buf.begin() + k, cmp);
        }
      };
      if (descending) order(Descending<K>{});
      else order(Ascending<K>{});
      for (int64_t j = 0; j < k; ++j) {
        vrow[j * vs] = static_cast<T>(buf[j].first);
        xrow[j * xs] = buf[j].second;
      }
    }
  });
}

void check_outputs(const LoomKernelCall& c, const char* op) {
  expect_arity(c, op, 1, 2);
  const LoomTensorDesc& in = c.inputs[0];
  if (c.outputs[0].dtype != in.dtype || c.outputs[1].dtype != LOOM_DTYPE_INT64 ||
      c.outputs[0].ndim != in.ndim || c.outputs[1].ndim != in.ndim) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected values of dtype %s and int64 indices with %d dims", op,
         plugin::dtype_name(in.dtype), in.ndim);
}

int32_t checked_dim(const LoomKernelCall& c, const char* op, int64_t d) {
  const int32_t nd = c.inputs[0].ndim;
  if (d < 0 || d >= std::max<int32_t>(nd, 1)) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: dim %lld out of range for %d dims", op, static_cast<long long>(d), nd);
  return static_cast<int32_t>(d);
}

// values: dim, descending, stable (ignored: every sort here is stable).
void sort(const LoomKernelCall& c) {
  check_outputs(c, "sort");
  expect_values(c, "sort", 2);
  const LoomTensorDesc& in = c.inputs[0];
  const int32_t dim = checked_dim(c, "sort", c.values[0].u.i);
  const int64_t n = in.ndim == 0 ? 1 : in.shape[dim];
  dispatch<DTypes::All>(in.dtype, "sort", [&](auto tag) {
    select_rows<decltype(tag)>(in, c.outputs[0], c.outputs[1], dim, n, c.values[1].u.i != 0, true, true);
  });
}

// values: k, dim, largest, sorted.
void topk(const LoomKernelCall& c) {
  check_outputs(c, "topk");
  expect_values(c, "topk", 4);
  const LoomTensorDesc& in = c.inputs[0];
  const int32_t dim = checked_dim(c, "topk", c.values[1].u.i);
  const int64_t n = in.ndim == 0 ? 1 : in.shape[dim];
  const int64_t k = c.values[0].u.i;
  if (k < 0 || k > n) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu topk: k %lld out of range for a dim of size %lld",
         static_cast<long long>(k), static_cast<long long>(n));
  dispatch<DTypes::NoBool>(in.dtype, "topk", [&](auto tag) {
    select_rows<decltype(tag)>(in, c.outputs[0], c.outputs[1], dim, k, c.values[2].u.i != 0, false,
                               c.values[3].u.i != 0);
  });
}

}  // namespace

void register_sort_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("sort", "cpu", kernel<sort>, kAllMask);
  r.kernel("topk", "cpu", kernel<topk>, kNoBoolMask);
}

}  // namespace loom::cpu
