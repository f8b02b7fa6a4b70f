// Reductions: the shared argument checks and planning (reduce_driver.hpp's
// `prepare`), the Σ-family kernels sum, mean, prod, all, any, and the
// registration of every reduction kernel.
#include "reduce.hpp"

#include "common.hpp"
#include "kernels.hpp"
#include "reduce_driver.hpp"
#include "reduce_ops.hpp"

#include <loom/plugin/reduce_dims.hpp>

namespace loom::cpu {
namespace reduce {
namespace {

struct Dim {
  int64_t size, in, o0, o1;
  bool red;
};

// Stride order: stride 0 (broadcast) counts as the largest, so it ends up
// outermost and never becomes the inner loop.
int64_t order_key(const Dim& d) { return d.in == 0 ? INT64_MAX : d.in; }

void make_plan(const LoomTensorDesc& in, const bool* reduced, const LoomTensorDesc& o0,
               const LoomTensorDesc& o1, Plan& plan) {
  Dim dims[plugin::kMaxIterDims];
  int n = 0;
  bool empty_red = false, empty_out = false;
  for (int32_t d = 0; d < in.ndim; ++d) {
    const int64_t size = in.shape[d];
    if (size == 1) continue;
    if (size == 0) {
      (reduced[d] ? empty_red : empty_out) = true;
      continue;
    }
    const bool r = reduced[d];
    Dim cur{size, in.strides[d], r ? 0 : o0.strides[d], r ? 0 : o1.strides[d], r};
    // Insertion sort, largest stride first; stable, so equal strides keep
    // their logical order (and std::stable_sort could allocate).
    int k = n++;
    for (; k > 0 && order_key(dims[k - 1]) < order_key(cur); --k) dims[k] = dims[k - 1];
    dims[k] = cur;
  }
  int m = 0;  // merge neighbours of one kind that are contiguous in every operand
  for (int i = 0; i < n; ++i) {
    const Dim& c = dims[i];
    if (m > 0) {
      Dim& p = dims[m - 1];
      if (p.red == c.red && p.in == c.in * c.size && p.o0 == c.o0 * c.size &&
          p.o1 == c.o1 * c.size) {
        p.size *= c.size;
        p.in = c.in;
        p.o0 = c.o0;
        p.o1 = c.o1;
        continue;
      }
    }
    dims[m++] = c;
  }
  int64_t ks[plugin::kMaxIterDims], ki[plugin::kMaxIterDims], k0[plugin::kMaxIterDims],
      k1[plugin::kMaxIterDims], rsz[plugin::kMaxIterDims], ri[plugin::kMaxIterDims];
  int nk = 0, nr = 0;
  for (int i = 0; i < m; ++i) {
    if (dims[i].red) {
      rsz[nr] = dims[i].size;
      ri[nr++] = dims[i].in;
    } else {
      ks[nk] = dims[i].size;
      ki[nk] = dims[i].in;
      k0[nk] = dims[i].o0;
      k1[nk++] = dims[i].o1;
    }
  }
  const int64_t* kst[3] = {ki, k0, k1};
  const int64_t* rst[1] = {ri};
  plan.numel_out = plan.kept.init(nk, ks, kst);
  plan.numel_red = plan.red.init(nr, rsz, rst);
  if (empty_out) plan.numel_out = 0;
  if (empty_red) plan.numel_red = 0;
  plan.inner_reduced = m > 0 && dims[m - 1].red;
}

}  // namespace

void prepare(const LoomKernelCall& c, const char* op, int32_t num_values,
             const int32_t* out_dtypes, int32_t num_outputs, Plan& plan) {
  expect_arity(c, op, 1, num_outputs);
  expect_values(c, op, num_values);
  const LoomTensorDesc& in = c.inputs[0];
  if (in.dtype < 0 || in.dtype >= LOOM_DTYPE_COUNT) fail_dtype(op, in.dtype);
  if (in.ndim < 0 || in.ndim > plugin::kMaxIterDims)
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: bad input ndim %d", op, in.ndim);
  bool reduced[plugin::kMaxIterDims];
  plugin::read_reduced_dims(c.values[0], in.ndim, "cpu", op, reduced);
  for (int32_t k = 0; k < num_outputs; ++k)
    plugin::expect_keepdim(in, reduced, c.outputs[k], out_dtypes[k], "cpu", op);
  make_plan(in, reduced, c.outputs[0], c.outputs[num_outputs - 1], plan);
}

}  // namespace reduce

namespace {

// The Σ-family kernel: output in the input's dtype.
template <DTypes Set, template <class> class MakeOp>
void same_dtype_reduction(const LoomKernelCall& c, const char* name) {
  expect_arity(c, name, 1, 1);
  const int32_t dtype = c.inputs[0].dtype;
  reduce::Plan plan;
  reduce::prepare(c, name, 1, &dtype, 1, plan);
  dispatch<Set>(dtype, name, [&](auto tag) {
    using T = decltype(tag);
    reduce::run(plan, plugin::data_ptr<const T>(c.inputs[0]),
                MakeOp<T>::make(plugin::data_ptr<T>(c.outputs[0])));
  });
}

template <class T>
struct MakeSum {
  static auto make(T* out) { return reduce::SumOp<T, reduce::SumMap, reduce::SumFin>{{}, {}, out}; }
};
template <class T>
struct MakeMean {
  static auto make(T* out) { return reduce::SumOp<T, reduce::SumMap, reduce::MeanFin>{{}, {}, out}; }
};
template <class T>
struct MakeProd {
  static auto make(T* out) { return reduce::ProdOp<T>{out}; }
};

// all/any: the input keeps its own dtype, the output is bool.
template <bool IsAll>
void logical(const LoomKernelCall& c, const char* name) {
  const int32_t out_dtype = LOOM_DTYPE_BOOL;
  reduce::Plan plan;
  reduce::prepare(c, name, 1, &out_dtype, 1, plan);
  dispatch<DTypes::All>(c.inputs[0].dtype, name, [&](auto tag) {
    using T = decltype(tag);
    reduce::run(plan, plugin::data_ptr<const T>(c.inputs[0]),
                reduce::LogicalOp<T, IsAll>{plugin::data_ptr<bool>(c.outputs[0])});
  });
}

}  // namespace

void sum(const LoomKernelCall& c) { same_dtype_reduction<DTypes::All, MakeSum>(c, "sum"); }
void mean(const LoomKernelCall& c) { same_dtype_reduction<DTypes::Floating, MakeMean>(c, "mean"); }
void prod(const LoomKernelCall& c) { same_dtype_reduction<DTypes::All, MakeProd>(c, "prod"); }
void all(const LoomKernelCall& c) { logical<true>(c, "all"); }
void any(const LoomKernelCall& c) { logical<false>(c, "any"); }

// "sum" itself is registered by register.cpp. Masks are the compute dtypes
// of docs/kernel_conventions.md: ops "as sum" (and cumsum/cumprod, whose
// dtype argument can ask for any dtype) and the value/index and logical ops
// take every dtype; the statistics take floating dtypes only.
void register_reduce_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("sum", "cpu", kernel<sum>, kAllMask);
  r.kernel("mean", "cpu", kernel<mean>, kFloatingMask);
  r.kernel("prod", "cpu", kernel<prod>, kAllMask);
  r.kernel("amax", "cpu", kernel<amax>, kAllMask);
  r.kernel("amin", "cpu", kernel<amin>, kAllMask);
  r.kernel("max.dim", "cpu", kernel<max_dim>, kAllMask);
  r.kernel("min.dim", "cpu", kernel<min_dim>, kAllMask);
  r.kernel("argmax", "cpu", kernel<argmax>, kAllMask);
  r.kernel("argmin", "cpu", kernel<argmin>, kAllMask);
  r.kernel("var", "cpu", kernel<var>, kFloatingMask);
  r.kernel("std", "cpu", kernel<stddev>, kFloatingMask);
  r.kernel("norm", "cpu", kernel<norm>, kFloatingMask);
  r.kernel("logsumexp", "cpu", kernel<logsumexp>, kFloatingMask);
  r.kernel("all", "cpu", kernel<all>, kAllMask);
  r.kernel("any", "cpu", kernel<any>, kAllMask);
  r.kernel("cumsum", "cpu", kernel<cumsum>, kAllMask);
  r.kernel("cumprod", "cpu", kernel<cumprod>, kAllMask);
}

}  // namespace loom::cpu
