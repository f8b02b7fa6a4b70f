// mydev_kernels.cpp — mydev's own kernels: add, mul (float32, float64,
// int64), relu (float32, float64), sum (every dim at once) and copy_ (every
// dtype to every dtype).
//
// A kernel gets the op's tensors as descriptors (data pointer, byte offset,
// shape, strides in elements) already in the dtype it registered for and,
// for elementwise ops, broadcast to the output's shape (stride 0 where an
// input repeats). These kernels take any strides, so they also serve:
//  - the in-place forms (x.add_(y)): loom hands the add kernel self as
//    outputs[0], the same memory as inputs[0];
//  - out= (torch.add(a, b, out=c)): outputs[0] is c in its own strides;
//  - transposed, sliced and broadcast inputs, with no copies.
// Three SDK headers do the work: loom/plugin/strided.hpp walks N tensors of
// one shape in runs of their innermost dimension, loom/plugin/scalar_ops.hpp
// holds the per-element functors loom's own plugins use (so add on int64
// wraps, and float16 would round, exactly as on the CPU), and
// loom/plugin/cast.hpp converts between dtypes by loom's rules (copy_).
// sum shows the other way to say no: a call a kernel does not take is
// declined (LOOM_STATUS_UNSUPPORTED with a reason) and loom runs it through
// the CPU fallback, quoting the reason under LOOM_FALLBACK=warn.
// Every op and dtype not registered here falls back the same way.
#include <loom/plugin.hpp>
#include <loom/plugin/cast.hpp>
#include <loom/plugin/dtype_visit.hpp>
#include <loom/plugin/reduce_dims.hpp>
#include <loom/plugin/scalar_ops.hpp>
#include <loom/plugin/strided.hpp>

#include <type_traits>

namespace mydev {
namespace {

using loom::plugin::Failure;

using loom::plugin::data_ptr;  // a descriptor's data + byte_offset, typed

// out[i] = f(a[i], b[i]) over every element, any strides (0: broadcast).
template <class T, class F>
void binary_strided(const LoomKernelCall& c, F f) {
  const LoomTensorDesc &out = c.outputs[0], &a = c.inputs[0], &b = c.inputs[1];
  const int64_t* strides[3] = {out.strides, a.strides, b.strides};
  loom::plugin::StridedIter<3> it;
  it.init(out.ndim, out.shape, strides);
  T* o = data_ptr<T>(out);
  const T *x = data_ptr<const T>(a), *y = data_ptr<const T>(b);
  const int64_t so = it.inner_stride(0), sx = it.inner_stride(1), sy = it.inner_stride(2);
  it.for_each_run(0, it.numel, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) o[off[0] + i * so] = f(x[off[1] + i * sx], y[off[2] + i * sy]);
  });
}

// out[i] = f(in[i]): one input, any strides, To and From may differ.
template <class To, class From, class F>
void unary_strided(const LoomTensorDesc& out, const LoomTensorDesc& in, F f) {
  const int64_t* strides[2] = {out.strides, in.strides};
  loom::plugin::StridedIter<2> it;
  it.init(out.ndim, out.shape, strides);
  To* o = data_ptr<To>(out);
  const From* x = data_ptr<const From>(in);
  const int64_t so = it.inner_stride(0), sx = it.inner_stride(1);
  it.for_each_run(0, it.numel, [&](const int64_t* off, int64_t n) {
    for (int64_t i = 0; i < n; ++i) o[off[0] + i * so] = f(x[off[1] + i * sx]);
  });
}

// The dtypes registered below; visit_dtype instantiates each kernel body
// once per dtype of its class and refuses any other (UNSUPPORTED).
constexpr uint64_t kAddMul = LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32) | LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT64) |
                             LOOM_DTYPE_BIT(LOOM_DTYPE_INT64);
constexpr uint64_t kFloats = LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32) | LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT64);
using loom::plugin::DTypes;

// add(self, other, *, alpha): values[0] is alpha, an INT or a FLOAT.
void add(const LoomKernelCall& c) {
  loom::plugin::visit_dtype<DTypes::NoBool>(c.outputs[0].dtype, "mydev", "add", [&](auto tag) {
    using T = decltype(tag);
    loom::plugin::ops::Add<T> op{};
    if constexpr (std::is_integral_v<T>)
      op.alpha = static_cast<loom::plugin::arith_t<T>>(loom::plugin::value_int(c, 0));
    else
      op.alpha = static_cast<loom::plugin::arith_t<T>>(loom::plugin::value_float(c, 0));
    binary_strided<T>(c, op);
  });
}

void mul(const LoomKernelCall& c) {
  loom::plugin::visit_dtype<DTypes::NoBool>(c.outputs[0].dtype, "mydev", "mul", [&](auto tag) {
    using T = decltype(tag);
    binary_strided<T>(c, loom::plugin::ops::Mul<T>{});
  });
}

void relu(const LoomKernelCall& c) {
  loom::plugin::visit_dtype<DTypes::Floating>(c.outputs[0].dtype, "mydev", "relu", [&](auto tag) {
    using T = decltype(tag);
    unary_strided<T, T>(c.outputs[0], c.inputs[0], loom::plugin::ops::Relu<T>{});
  });
}

// sum over every dim at once (the loss of a training step); a partial
// reduction is declined with a reason and runs through the CPU fallback.
void sum(const LoomKernelCall& c) {
  const LoomTensorDesc &in = c.inputs[0], &out = c.outputs[0];
  bool reduced[64];
  if (in.ndim > 64) throw Failure(LOOM_STATUS_UNSUPPORTED, "mydev sum: more than 64 dims");
  loom::plugin::read_reduced_dims(c.values[0], in.ndim, "mydev", "sum", reduced);
  for (int32_t d = 0; d < in.ndim; ++d)
    if (!reduced[d] && in.shape[d] != 1) throw Failure(LOOM_STATUS_UNSUPPORTED, "mydev sum: reduces over every dim only");
  loom::plugin::visit_dtype<DTypes::NoBool>(out.dtype, "mydev", "sum", [&](auto tag) {
    using T = decltype(tag);
    using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;  // integers wrap, as on the CPU
    const int64_t* strides[1] = {in.strides};
    loom::plugin::StridedIter<1> it;
    it.init(in.ndim, in.shape, strides);
    const T* x = data_ptr<const T>(in);
    const int64_t sx = it.inner_stride(0);
    Acc total = 0;
    it.for_each_run(0, it.numel, [&](const int64_t* off, int64_t n) {
      for (int64_t i = 0; i < n; ++i) total += static_cast<Acc>(x[off[0] + i * sx]);
    });
    *data_ptr<T>(out) = static_cast<T>(total);
  });
}

// copy_(self, src): self = src converted to self's dtype. src arrives
// broadcast to self's shape in its own dtype; every layout, every dtype
// pair. With copy_ on the device, .contiguous(), .to(dtype) and out= into a
// tensor of another dtype stay on the device too.
void copy_(const LoomKernelCall& c) {
  const LoomTensorDesc &dst = c.outputs[0], &src = c.inputs[1];
  loom::plugin::visit_dtype<DTypes::All>(dst.dtype, "mydev", "copy_", [&](auto to_tag) {
    using To = decltype(to_tag);
    loom::plugin::visit_dtype<DTypes::All>(src.dtype, "mydev", "copy_", [&](auto from_tag) {
      using From = decltype(from_tag);
      unary_strided<To, From>(dst, src, [](From v) { return loom::plugin::cast<To>(v); });
    });
  });
}

}  // namespace

void register_kernels(loom::plugin::Registrar& r) {
  using loom::plugin::kernel;
  r.kernel("add", "mydev", kernel<add>, kAddMul);
  r.kernel("mul", "mydev", kernel<mul>, kAddMul);
  r.kernel("relu", "mydev", kernel<relu>, kFloats);
  r.kernel("sum", "mydev", kernel<sum>, kAddMul);
  r.kernel("copy_", "mydev", kernel<copy_>);  // mask 0: every dtype
}

}  // namespace mydev
