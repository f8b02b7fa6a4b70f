// Shared by every CPU kernel file: argument checks that cost a few branches
// on success and build their message only on failure, dtype dispatch (the
// shared visitor), the OpenMP work splitter and scalar conversion.
#pragma once

#include <loom/plugin.hpp>
#include <loom/plugin/cast.hpp>
#include <loom/plugin/dtype_visit.hpp>
#include <loom/plugin/half.hpp>
#include <loom/plugin/opmath.hpp>

#include <omp.h>

#include <atomic>
#include <cstdint>
#include <exception>

namespace loom::cpu {

using plugin::BFloat16;
using plugin::Half;

// Below this many elements a loop runs on the calling thread, and each
// extra thread gets at least this many. Waking the OpenMP team costs a few
// microseconds on an idle machine, but on a busy one (more runnable threads
// than cores) a parallel region waits for a descheduled worker while libgomp
// spins: a 65536-element add measured 19.6 us on one thread and 11.5 ms on
// two under load (docs/benchmarks.md, "C++ training step"). 256K float
// elements is ~50-100 us of memory-bound work per thread, so fork/join stays
// a few percent of it when idle, and mid-sized tensors (an MLP's weights,
// an optimizer step) never risk the barrier.
inline constexpr int64_t kParallelGrain = 262144;

// ---------------------------------------------------------------- errors ---

// Throws plugin::Failure(code, printf-formatted message). Kept out of line so
// the checks below inline to a compare and a cold call.
[[noreturn]] void fail(int32_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

[[noreturn]] void fail_dtype(const char* op, int32_t dtype);

inline void expect_arity(const LoomKernelCall& c, const char* op, int32_t inputs, int32_t outputs) {
  if (c.num_inputs != inputs || c.num_outputs != outputs) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected %d inputs and %d outputs, got %d and %d",
         op, inputs, outputs, c.num_inputs, c.num_outputs);
}

inline void expect_values(const LoomKernelCall& c, const char* op, int32_t values) {
  if (c.num_values < values) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected %d non-tensor arguments, got %d", op,
         values, c.num_values);
}

// `t` must have `ref`'s ndim and shape (elementwise operands are already
// broadcast by the core) and, when `same_dtype`, its dtype.
inline void expect_like(const LoomTensorDesc& t, const LoomTensorDesc& ref, const char* op,
                        bool same_dtype = true) {
  bool ok = t.ndim == ref.ndim && (!same_dtype || t.dtype == ref.dtype);
  for (int32_t d = 0; ok && d < ref.ndim; ++d) ok = t.shape[d] == ref.shape[d];
  if (!ok) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT,
         "cpu %s: an input does not match the output (ndim %d vs %d, dtype %s vs %s, or shape)",
         op, t.ndim, ref.ndim, plugin::dtype_name(t.dtype), plugin::dtype_name(ref.dtype));
}

// The operands of a binary elementwise kernel, after the checks every one
// makes: two inputs, one output, each input shaped (and, unless
// `same_dtype` is false, typed) like the output.
struct BinaryArgs {
  const LoomTensorDesc& out;
  const LoomTensorDesc& a;
  const LoomTensorDesc& b;
};
inline BinaryArgs binary_args(const LoomKernelCall& c, const char* op, bool same_dtype = true) {
  expect_arity(c, op, 2, 1);
  const LoomTensorDesc& out = c.outputs[0];
  expect_like(c.inputs[0], out, op, same_dtype);
  expect_like(c.inputs[1], same_dtype ? out : c.inputs[0], op);
  return {out, c.inputs[0], c.inputs[1]};
}

// True when every descriptor is contiguous (they share one shape).
template <class... D>
inline bool all_contiguous(const D&... t) {
  return (plugin::is_contiguous(t) && ...);
}

// ------------------------------------------------------------- dispatch ---

// Dtype classes, their masks and the visitor are loom's shared ones
// (loom/plugin/dtype_visit.hpp); the compute types too (loom/plugin/opmath.hpp).
using plugin::arith_t;
using plugin::DTypes;
using plugin::from_arith;
using plugin::kAllMask;
using plugin::kFloatingMask;
using plugin::kIntegralOrBoolMask;
using plugin::kNoBoolMask;
using plugin::opmath_t;
using plugin::to_arith;

// Calls f(T{}) for the C++ type of `dtype` when it is in the dtype class;
// otherwise LOOM_STATUS_UNSUPPORTED naming op and dtype.
template <DTypes Set, class F>
inline void dispatch(int32_t dtype, const char* op, F&& f) {
  plugin::visit_dtype<Set>(dtype, "cpu", op, f);
}

// A Scalar argument (bool, int or float) as a value of dtype-type T, with
// the casting rules of plugin/cast.hpp.
template <class T>
inline T scalar_as(const LoomValue& v) {
  switch (v.kind) {
    case LOOM_VALUE_BOOL: return plugin::cast<T>(v.u.i != 0);
    case LOOM_VALUE_INT: return plugin::cast<T>(static_cast<int64_t>(v.u.i));
    case LOOM_VALUE_FLOAT: return plugin::cast<T>(v.u.f);
    default: break;
  }
  fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu: expected a Scalar argument, got value kind %d", v.kind);
}

// ------------------------------------------------------------- parallel ---

// The team size every kernel uses, from loom::set_num_threads (device.cpp);
// starts at OpenMP's default (OMP_NUM_THREADS or the core count).
int max_threads() noexcept;

// Carries the first exception thrown inside an OpenMP region (a worker's
// failed allocation, say) out of it: an exception may not leave a region,
// so each thread's work runs under run(), and the calling thread calls
// rethrow() once the region has ended.
class RegionError {
 public:
  template <class F>
  void run(F&& f) noexcept {
    try {
      f();
    } catch (...) {
      if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::current_exception();
    }
  }
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

// Runs f(begin, end) over [0, n): on the calling thread when n <= grain (or
// already inside a parallel region), else in contiguous blocks across an
// OpenMP team no larger than n / grain. An exception f throws on any thread
// reaches the caller (the first one, after the others finish).
template <class F>
inline void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= grain || omp_in_parallel()) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
  int64_t want = (n + grain - 1) / grain;
  const int64_t limit = max_threads();
  if (want > limit) want = limit;
  if (want <= 1) {
    f(int64_t{0}, n);
    return;
  }
  RegionError error;
#pragma omp parallel num_threads(static_cast<int>(want))
  {
    const int64_t nt = omp_get_num_threads();
    const int64_t t = omp_get_thread_num();
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t begin = t * chunk;
    const int64_t end = begin + chunk < n ? begin + chunk : n;
    if (begin < end) error.run([&] { f(begin, end); });
  }
  error.rethrow();
}

}  // namespace loom::cpu
