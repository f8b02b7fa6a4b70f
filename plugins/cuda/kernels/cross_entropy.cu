// cross_entropy and _cross_entropy_backward on CUDA for class-index targets
// (docs/kernel_conventions.md, "Nn"; the math is cross_entropy_ops.cuh, the
// CPU plugin's nn_cross_entropy.cpp the reference). Probability targets (a
// floating target) are declined with LOOM_STATUS_UNSUPPORTED: the core runs
// the composite on the device.
//
// Registered CONTIGUOUS_ONLY: the input is [N, C, inner] row-major (inner =
// the product of the spatial dims; 1 for [N, C] and [C]), so sample
// r = n·inner + j reads its C logits `inner` apart. Samples go to a thread,
// a warp or a block (row_reduce.cuh: strided samples one per thread, so
// neighbouring threads read neighbouring logits).
//   forward:  per sample, an OnlineSoftmax over the logits (and, with label
//             smoothing, a second sweep for Σ w_c (m - x_c)); 'none' writes
//             the loss, 'sum'/'mean' write loss and weight to a workspace
//             that one block then adds in a fixed order, in double
//             (deterministic).
//   backward: for 'mean', one block first sums the counted targets'
//             weights (same order); then per sample the OnlineSoftmax and
//             one sweep writing the gradient.
// An out-of-range target (not ignore_index) is recorded on the device (the
// smallest flat index, by atomicMin) and read back after the kernels: the
// call fails with the composite's words. That read synchronises the stream
// once per call, as the indexing kernels do.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "cross_entropy_ops.cuh"
#include "dtype.cuh"
#include "row_reduce.cuh"
#include "vendor/gpu_target.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;
using rows::OnlineSoftmax;
using xent::Smoothing;
using xent::Target;

constexpr unsigned long long kNoBadTarget = ~0ull;
constexpr int kSumThreads = rows::kBlockRowThreads;  // the one block of the final sums

// Where sample r's logits start and how far apart they are.
struct Layout {
  int64_t samples, classes, inner;
  __device__ int64_t start(int64_t r) const { return (r / inner) * classes * inner + r % inner; }
};

// Whole-call sums (sums_kernel), in the workspace.
struct CallSums {
  double total_weight;      // Σ w_t over the counted targets
  double class_weight_sum;  // S_w
};

template <class T>
__device__ opmath_t<T> weight_of(const T* w, int64_t c) {
  return w ? widen(w[c]) : opmath_t<T>(1);
}

// The statistics of sample r, merged over its group (every lane gets them).
template <int RowThreads, class T>
__device__ OnlineSoftmax<opmath_t<T>> sample_stats(const T* xr, int64_t classes, int64_t inner, int lane) {
  OnlineSoftmax<opmath_t<T>> st;
  for (int64_t i = lane; i < classes; i += RowThreads) st.add(widen(xr[i * inner]));
  return rows::merge_row<RowThreads>(st);
}

// Forward. `out` is the per-sample loss ('none'), else null and the loss and
// weight of every sample go to loss_ws / weight_ws.
template <int RowThreads, class T>
__global__ void forward_kernel(const T* x, const int64_t* target, const T* w, Layout lay, int64_t ignore_index,
                               Smoothing<opmath_t<T>> k, const CallSums* sums, T* out, opmath_t<T>* loss_ws,
                               opmath_t<T>* weight_ws, unsigned long long* bad) {
  using C = opmath_t<T>;
  if (sums) k.sw = static_cast<C>(sums->class_weight_sum);
  const rows::RowGroup<RowThreads> g;
  for (int64_t r = g.first; r < lay.samples; r += g.step) {
    const int64_t t = target[r];
    const Target kind = xent::classify(t, lay.classes, ignore_index);  // one value per group: uniform branches
    C loss = 0, wt = 0;
    if (kind == Target::Counted) {
      const T* xr = x + lay.start(r);
      const OnlineSoftmax<C> st = sample_stats<RowThreads>(xr, lay.classes, lay.inner, g.lane);
      xent::Sum<C> smooth;
      if (k.b != 0) {
        for (int64_t i = g.lane; i < lay.classes; i += RowThreads)
          smooth.add(weight_of(w, i) * (st.m - widen(xr[i * lay.inner])));
        smooth = rows::merge_row<RowThreads>(smooth);
      }
      wt = weight_of(w, t);
      loss = xent::sample_loss(st, widen(xr[t * lay.inner]), wt, smooth.v, k);
    } else if (kind == Target::OutOfRange && g.lane == 0) {
      atomicMin(bad, static_cast<unsigned long long>(r));
    }
    if (g.lane != 0) continue;
    if (out) {
      out[r] = narrow<T>(loss);
    } else {
      loss_ws[r] = loss;
      weight_ws[r] = wt;
    }
  }
}

// One block: out[0] = Σ loss (or Σ loss / Σ weight), added in a fixed order.
template <class T>
__global__ void reduce_kernel(const opmath_t<T>* loss, const opmath_t<T>* weight, int64_t n, bool mean, T* out) {
  xent::LossSum s;
  for (int64_t i = threadIdx.x; i < n; i += kSumThreads) s.add(loss[i], weight[i]);
  s = rows::merge_row<kSumThreads>(s);
  if (threadIdx.x == 0) out[0] = narrow<T>(static_cast<opmath_t<T>>(s.result(mean)));
}

// One block, before the sample kernels that need them: Σ w_t over the
// counted targets ('mean' backward) and S_w = Σ_c w_c (label smoothing with
// class weights), added in a fixed order.
template <class T>
__global__ void sums_kernel(const int64_t* target, const T* w, Layout lay, int64_t ignore_index, CallSums* out) {
  xent::Sum<double> counted, classes;
  for (int64_t r = threadIdx.x; r < lay.samples; r += kSumThreads) {
    const int64_t t = target[r];
    if (xent::classify(t, lay.classes, ignore_index) == Target::Counted)
      counted.add(static_cast<double>(weight_of(w, t)));
  }
  for (int64_t c = threadIdx.x; c < lay.classes; c += kSumThreads) classes.add(static_cast<double>(weight_of(w, c)));
  counted = rows::merge_row<kSumThreads>(counted);
  classes = rows::merge_row<kSumThreads>(classes);
  if (threadIdx.x == 0) *out = CallSums{counted.v, classes.v};
}

// Backward. g is grad_output: one per sample ('none') or one value, divided
// by sums->total_weight for 'mean'.
template <int RowThreads, class T>
__global__ void backward_kernel(const T* g, bool per_sample, bool mean, const T* x, const int64_t* target,
                                const T* w, Layout lay, int64_t ignore_index, Smoothing<opmath_t<T>> k,
                                const CallSums* sums, T* y, unsigned long long* bad) {
  using C = opmath_t<T>;
  if (sums) k.sw = static_cast<C>(sums->class_weight_sum);
  const rows::RowGroup<RowThreads> grp;
  for (int64_t r = grp.first; r < lay.samples; r += grp.step) {
    const int64_t t = target[r];
    const Target kind = xent::classify(t, lay.classes, ignore_index);
    T* yr = y + lay.start(r);
    if (kind != Target::Counted) {
      if (kind == Target::OutOfRange && grp.lane == 0) atomicMin(bad, static_cast<unsigned long long>(r));
      for (int64_t i = grp.lane; i < lay.classes; i += RowThreads) yr[i * lay.inner] = narrow<T>(C(0));
      continue;
    }
    const T* xr = x + lay.start(r);
    const OnlineSoftmax<C> st = sample_stats<RowThreads>(xr, lay.classes, lay.inner, grp.lane);
    double coef = static_cast<double>(widen(g[per_sample ? r : 0]));
    if (mean) coef /= sums->total_weight;
    const xent::GradRow<C> row = xent::grad_row(st, static_cast<C>(coef), weight_of(w, t), k);
    for (int64_t i = grp.lane; i < lay.classes; i += RowThreads)
      yr[i * lay.inner] = narrow<T>(xent::grad_element(row, st, widen(xr[i * lay.inner]), weight_of(w, i), i == t));
  }
}

// ---- host side ---------------------------------------------------------------------------

enum class Reduction { None, Mean, Sum };

// The operands both kernels read; `first` is self's position in inputs.
struct Problem {
  const LoomTensorDesc* input;
  const LoomTensorDesc* target;
  const LoomTensorDesc* weight;  // nullptr: no class weights
  Layout layout;
  Reduction reduction;
  int64_t ignore_index;
  double ls;
};

[[noreturn]] void fail(int32_t code, const char* op, const std::string& what) {
  throw Failure(code, std::string(LOOM_GPU_NAME " ") + op + ": " + what);
}

Problem read_problem(const LoomKernelCall& c, const char* op, int32_t first) {
  if (c.num_inputs != first + 3 || c.num_outputs != 1 || c.num_values < 3)
    fail(LOOM_STATUS_INVALID_ARGUMENT, op, "expected " + std::to_string(first + 3) +
                                               " inputs, one output and (reduction, ignore_index, label_smoothing)");
  const LoomTensorDesc& in = c.inputs[first];
  const LoomTensorDesc& target = c.inputs[first + 1];
  const LoomTensorDesc& weight = c.inputs[first + 2];
  if (target.dtype != LOOM_DTYPE_INT64)
    fail(LOOM_STATUS_UNSUPPORTED, op, std::string("only int64 class-index targets (got ") +
                                          plugin::dtype_name(target.dtype) +
                                          "; probability targets run as the core's composite)");
  if (in.ndim < 1) fail(LOOM_STATUS_INVALID_ARGUMENT, op, "expected an input of 1 or more dims");
  const LoomValue& rv = c.values[0];
  const std::string_view rs = rv.kind == LOOM_VALUE_STRING
                                  ? std::string_view(rv.u.str.data, static_cast<size_t>(rv.u.str.size))
                                  : std::string_view();
  Problem p{&in, &target, plugin::is_absent(weight) ? nullptr : &weight, {1, 1, 1}, Reduction::Mean,
            plugin::value_int(c, 1), plugin::value_float(c, 2)};
  if (rs == "none") p.reduction = Reduction::None;
  else if (rs == "sum") p.reduction = Reduction::Sum;
  else if (rs != "mean") fail(LOOM_STATUS_INVALID_ARGUMENT, op, "reduction must be the string 'none', 'mean' or 'sum'");
  const int64_t N = in.ndim == 1 ? 1 : in.shape[0];
  p.layout.classes = in.ndim == 1 ? in.shape[0] : in.shape[1];
  for (int32_t d = 2; d < in.ndim; ++d) p.layout.inner *= in.shape[d];
  p.layout.samples = N * p.layout.inner;
  if (plugin::numel(target) != p.layout.samples)
    fail(LOOM_STATUS_INVALID_ARGUMENT, op, "target has " + std::to_string(plugin::numel(target)) +
                                               " elements, expected " + std::to_string(p.layout.samples));
  if (p.weight && (plugin::numel(weight) != p.layout.classes || weight.dtype != in.dtype))
    fail(LOOM_STATUS_INVALID_ARGUMENT, op, "weight must have " + std::to_string(p.layout.classes) +
                                               " elements of the input's dtype");
  for (int32_t i = 0; i < c.num_inputs; ++i)
    if (!plugin::is_absent(c.inputs[i]) && !plugin::is_contiguous(c.inputs[i]))
      fail(LOOM_STATUS_INVALID_ARGUMENT, op, "registered CONTIGUOUS_ONLY, got a strided input " + std::to_string(i));
  if (!plugin::is_contiguous(c.outputs[0]) || c.outputs[0].dtype != in.dtype)
    fail(LOOM_STATUS_INVALID_ARGUMENT, op, "expected a contiguous output of the input's dtype");
  return p;
}

// One block of the device's caching allocator for the call: the bad-target
// slot and the CallSums first (8-byte aligned), then the per-sample arrays.
// Freed on every path (stream-ordered reuse).
class Workspace {
 public:
  Workspace(int device, cudaStream_t stream, size_t per_sample_bytes)
      : device_(device), stream_(stream), allocator_(allocator(device)),
        base_(static_cast<char*>(allocator_.allocate(kHead + per_sample_bytes, stream))) {
    try {
      check(cudaMemsetAsync(base_, 0xff, sizeof(unsigned long long), stream), device, "cudaMemsetAsync (cross_entropy)");
    } catch (...) {
      allocator_.free(base_);
      throw;
    }
  }
  ~Workspace() { allocator_.free(base_); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  unsigned long long* bad() const { return reinterpret_cast<unsigned long long*>(base_); }
  CallSums* sums() const { return reinterpret_cast<CallSums*>(base_ + 8); }
  template <class C>
  C* array(int64_t i, int64_t samples) const {
    return reinterpret_cast<C*>(base_ + kHead) + i * samples;
  }

  // Fails with the composite's words when a kernel recorded a bad target
  // (waits for the work queued so far).
  void report(const char* op, const Problem& p) const {
    unsigned long long first = 0;
    check(cudaGetLastError(), device_, "cross_entropy kernel launch");
    check(cudaMemcpyAsync(&first, bad(), sizeof first, cudaMemcpyDeviceToHost, stream_), device_,
          "cudaMemcpyAsync (cross_entropy target check)");
    check(cudaStreamSynchronize(stream_), device_, "cudaStreamSynchronize (cross_entropy target check)");
    if (first == kNoBadTarget) return;
    int64_t t = 0;
    check(cudaMemcpyAsync(&t, plugin::data_ptr<const int64_t>(*p.target) + first, sizeof t, cudaMemcpyDeviceToHost,
                          stream_), device_, "cudaMemcpyAsync (cross_entropy bad target)");
    check(cudaStreamSynchronize(stream_), device_, "cudaStreamSynchronize (cross_entropy bad target)");
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  std::string(op) + ": target " + std::to_string(t) + " is out of bounds for " +
                      std::to_string(p.layout.classes) + " classes (at flat index " + std::to_string(first) +
                      " of the target; ignore_index is " + std::to_string(p.ignore_index) + ")");
  }

 private:
  static constexpr size_t kHead = 8 + sizeof(CallSums);
  int device_;
  cudaStream_t stream_;
  gpu::CachingAllocator& allocator_;
  char* base_;
};

template <class T>
const T* weights_of(const Problem& p) {
  return p.weight ? plugin::data_ptr<const T>(*p.weight) : nullptr;
}

// Runs sums_kernel when the call needs its sums: the counted weight for
// 'mean' backward (`need_total`), S_w for label smoothing with weights.
// Returns where they are, or nullptr (then S_w = C).
template <class T>
const CallSums* launch_sums(const Problem& p, const Workspace& ws, cudaStream_t s, int index, bool need_total) {
  if (!need_total && !(p.weight && p.ls != 0)) return nullptr;
  sums_kernel<T><<<1, kSumThreads, 0, s>>>(plugin::data_ptr<const int64_t>(*p.target), weights_of<T>(p), p.layout,
                                            p.ignore_index, ws.sums());
  check(cudaGetLastError(), index, "cross_entropy sums launch");
  return ws.sums();
}

void cross_entropy(const LoomKernelCall& c) {
  const Problem p = read_problem(c, "cross_entropy", 0);
  const LoomTensorDesc& out = c.outputs[0];
  const bool none = p.reduction == Reduction::None;
  if (plugin::numel(out) != (none ? p.layout.samples : 1))
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cross_entropy", "output has the wrong number of elements");
  const int index = out.device.index;
  use_device(index);
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  visit<DTypes::Floating>(p.input->dtype, "cross_entropy", [&](auto tag) {
    using T = decltype(tag);
    using C = opmath_t<T>;
    const Workspace ws(index, s, none ? 0 : 2 * static_cast<size_t>(p.layout.samples) * sizeof(C));
    const auto k = xent::narrow_smoothing<C>(
        xent::smoothing(p.ls, p.layout.classes, static_cast<double>(p.layout.classes)));
    const CallSums* sums = launch_sums<T>(p, ws, s, index, false);
    C* loss = none ? nullptr : ws.array<C>(0, p.layout.samples);
    C* weight = none ? nullptr : ws.array<C>(1, p.layout.samples);
    if (p.layout.samples > 0) {
      const rows::RowLaunch l = rows::pick_row_launch(p.layout.samples, p.layout.classes, p.layout.inner > 1);
      rows::with_row_threads(l, [&](auto rt) {
        forward_kernel<decltype(rt)::value, T><<<l.grid, l.block, 0, s>>>(
            plugin::data_ptr<const T>(*p.input), plugin::data_ptr<const int64_t>(*p.target), weights_of<T>(p),
            p.layout, p.ignore_index, k, sums, none ? plugin::data_ptr<T>(out) : nullptr, loss, weight, ws.bad());
      });
      check(cudaGetLastError(), index, "cross_entropy kernel launch");
    }
    if (!none) {
      reduce_kernel<T><<<1, kSumThreads, 0, s>>>(loss, weight, p.layout.samples, p.reduction == Reduction::Mean,
                                                 plugin::data_ptr<T>(out));
      check(cudaGetLastError(), index, "cross_entropy reduction launch");
    }
    ws.report("cross_entropy", p);
  });
}

void cross_entropy_backward(const LoomKernelCall& c) {
  constexpr const char* kOp = "_cross_entropy_backward";
  const Problem p = read_problem(c, kOp, 1);
  const LoomTensorDesc& grad = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  const bool none = p.reduction == Reduction::None;
  if (grad.dtype != p.input->dtype || plugin::numel(grad) != (none ? p.layout.samples : 1) ||
      plugin::numel(out) != plugin::numel(*p.input))
    fail(LOOM_STATUS_INVALID_ARGUMENT, kOp, "grad_output or the output does not fit the input");
  if (plugin::numel(out) == 0 && p.layout.samples == 0) return;
  const int index = out.device.index;
  use_device(index);
  const cudaStream_t s = static_cast<cudaStream_t>(c.stream);
  visit<DTypes::Floating>(p.input->dtype, kOp, [&](auto tag) {
    using T = decltype(tag);
    using C = opmath_t<T>;
    const Workspace ws(index, s, 0);
    const bool mean = p.reduction == Reduction::Mean;
    const auto k = xent::narrow_smoothing<C>(
        xent::smoothing(p.ls, p.layout.classes, static_cast<double>(p.layout.classes)));
    const CallSums* sums = launch_sums<T>(p, ws, s, index, mean);
    const rows::RowLaunch l = rows::pick_row_launch(p.layout.samples, p.layout.classes, p.layout.inner > 1);
    rows::with_row_threads(l, [&](auto rt) {
      backward_kernel<decltype(rt)::value, T><<<l.grid, l.block, 0, s>>>(
          plugin::data_ptr<const T>(grad), none, mean, plugin::data_ptr<const T>(*p.input),
          plugin::data_ptr<const int64_t>(*p.target), weights_of<T>(p), p.layout, p.ignore_index, k, sums,
          plugin::data_ptr<T>(out), ws.bad());
    });
    check(cudaGetLastError(), index, "_cross_entropy_backward kernel launch");
    ws.report(kOp, p);
  });
}

}  // namespace

void register_cross_entropy_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  // Contiguous [N, C, inner] keeps the sample addressing to one division;
  // the core copies the rare strided operand, as for layer_norm.
  r.kernel("cross_entropy", LOOM_GPU_NAME, kernel<cross_entropy>, kFloatingMask, LOOM_KERNEL_CONTIGUOUS_ONLY);
  r.kernel("_cross_entropy_backward", LOOM_GPU_NAME, kernel<cross_entropy_backward>, kFloatingMask,
           LOOM_KERNEL_CONTIGUOUS_ONLY);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
