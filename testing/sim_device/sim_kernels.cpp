// sim_kernels.cpp — the only two kernels sim has: add and mul (everything
// else reaches sim through loom's CPU fallback), and a diagnostic op that
// shows which stream loom hands sim's kernels.
#include "sim_memory.hpp"
#include "sim_runtime.hpp"

#include <loom/plugin.hpp>

namespace sim {
namespace {

using loom::plugin::Failure;

// Calls f(out_offset, a_offset, b_offset) in elements for every element of a
// broadcast elementwise call (any strides, stride 0 included).
template <class F>
void for_each_index(const LoomTensorDesc& out, const LoomTensorDesc& a, const LoomTensorDesc& b,
                    F&& f) {
  const int32_t nd = out.ndim;
  int64_t idx[64] = {};
  if (nd > 64) throw Failure(LOOM_STATUS_UNSUPPORTED, "sim: more than 64 dimensions");
  const int64_t n = loom::plugin::numel(out);
  int64_t o = 0, x = 0, y = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(o, x, y);
    for (int32_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < out.shape[d]) {
        o += out.strides[d];
        x += a.strides[d];
        y += b.strides[d];
        break;
      }
      o -= out.strides[d] * (out.shape[d] - 1);
      x -= a.strides[d] * (out.shape[d] - 1);
      y -= b.strides[d] * (out.shape[d] - 1);
      idx[d] = 0;
    }
  }
}

template <class T>
T* host_data(const LoomTensorDesc& t) {
  return reinterpret_cast<T*>(static_cast<char*>(to_host(t.data)) + t.byte_offset);
}

template <bool IsAdd>
void binary(const LoomKernelCall& c) {
  check_work_stream(c.outputs[0].device.index, c.stream);
  const LoomTensorDesc& a = c.inputs[0];
  const LoomTensorDesc& b = c.inputs[1];
  const LoomTensorDesc& out = c.outputs[0];
  const double alpha = IsAdd ? loom::plugin::value_float(c, 0) : 1.0;
  loom::plugin::visit_dtype(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* pa = host_data<T>(a);
    const T* pb = host_data<T>(b);
    T* po = host_data<T>(out);
    for_each_index(out, a, b, [&](int64_t o, int64_t x, int64_t y) {
      if constexpr (std::is_same_v<T, bool>) {
        po[o] = IsAdd ? (pa[x] || pb[y]) : (pa[x] && pb[y]);
      } else if constexpr (std::is_integral_v<T>) {
        // Integers wrap on overflow, as on the CPU: in uint64 (a double's
        // product converted back would be out of range, which is undefined).
        const uint64_t u = static_cast<uint64_t>(pa[x]), v = static_cast<uint64_t>(pb[y]);
        po[o] = static_cast<T>(IsAdd ? u + static_cast<uint64_t>(static_cast<int64_t>(alpha)) * v : u * v);
      } else if constexpr (IsAdd) {
        po[o] = static_cast<T>(static_cast<double>(pa[x]) + alpha * static_cast<double>(pb[y]));
      } else {
        po[o] = static_cast<T>(static_cast<double>(pa[x]) * static_cast<double>(pb[y]));
      }
    });
  });
}

// Integers above 2^53 would lose precision through double: leave them to
// the fallback rather than compute them wrong.
constexpr uint64_t kDTypes = LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL) | LOOM_DTYPE_BIT(LOOM_DTYPE_UINT8) |
                             LOOM_DTYPE_BIT(LOOM_DTYPE_INT8) | LOOM_DTYPE_BIT(LOOM_DTYPE_INT16) |
                             LOOM_DTYPE_BIT(LOOM_DTYPE_INT32) | LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT16) |
                             LOOM_DTYPE_BIT(LOOM_DTYPE_BFLOAT16) | LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32) |
                             LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT64);

// sim_kernel_stream(x): a 0-d int64 tensor holding the stream handle this
// kernel call received (0 for the default stream), so tests can see that
// loom passes the current stream. Checked like any other sim work.
void kernel_stream(const LoomKernelCall& c) {
  check_work_stream(c.outputs[0].device.index, c.stream);
  *host_data<int64_t>(c.outputs[0]) = static_cast<int64_t>(reinterpret_cast<intptr_t>(c.stream));
}

LoomError* kernel_stream_shape(const LoomKernelCall*, LoomOutputSpec* specs, int32_t, void*) {
  specs[0].dtype = LOOM_DTYPE_INT64;
  specs[0].ndim = 0;
  return nullptr;
}

}  // namespace

void register_kernels(loom::plugin::Registrar& r) {
  r.kernel("add", "sim", loom::plugin::kernel<binary<true>>, kDTypes);
  r.kernel("mul", "sim", loom::plugin::kernel<binary<false>>, kDTypes);
  r.def("sim_kernel_stream(Tensor self) -> Tensor", &kernel_stream_shape);
  r.kernel("sim_kernel_stream", "sim", loom::plugin::kernel<kernel_stream>);
}

}  // namespace sim
