// mydev_kernels.cpp — mydev's own kernels: add, mul and relu on float32.
//
// A kernel gets the op's tensors as descriptors (data pointer, shape,
// strides in elements) already in the dtype the kernel registered for and,
// for elementwise ops, already broadcast to the output's shape (stride 0
// where an input repeats). These kernels handle the contiguous case and
// decline the rest with LOOM_STATUS_UNSUPPORTED and a reason: loom then runs
// that call through the CPU fallback, so results stay right while a backend
// grows. Every op and dtype not registered here falls back the same way.
#include <loom/plugin.hpp>

namespace mydev {
namespace {

using loom::plugin::Failure;

const float* in(const LoomKernelCall& c, int i) {
  return reinterpret_cast<const float*>(static_cast<const char*>(c.inputs[i].data) + c.inputs[i].byte_offset);
}
float* out(const LoomKernelCall& c) {
  return reinterpret_cast<float*>(static_cast<char*>(c.outputs[0].data) + c.outputs[0].byte_offset);
}

void require_contiguous(const LoomKernelCall& c, int32_t n_inputs) {
  bool ok = loom::plugin::is_contiguous(c.outputs[0]);
  for (int32_t i = 0; i < n_inputs; ++i) ok = ok && loom::plugin::is_contiguous(c.inputs[i]);
  if (!ok) throw Failure(LOOM_STATUS_UNSUPPORTED, "mydev: contiguous tensors only (no broadcasting or strides)");
}

// add(self, other, *, alpha): values[0] is alpha.
void add(const LoomKernelCall& c) {
  require_contiguous(c, 2);
  const float alpha = static_cast<float>(loom::plugin::value_float(c, 0));
  const float *a = in(c, 0), *b = in(c, 1);
  float* o = out(c);
  for (int64_t i = 0, n = loom::plugin::numel(c.outputs[0]); i < n; ++i) o[i] = a[i] + alpha * b[i];
}

void mul(const LoomKernelCall& c) {
  require_contiguous(c, 2);
  const float *a = in(c, 0), *b = in(c, 1);
  float* o = out(c);
  for (int64_t i = 0, n = loom::plugin::numel(c.outputs[0]); i < n; ++i) o[i] = a[i] * b[i];
}

void relu(const LoomKernelCall& c) {
  require_contiguous(c, 1);
  const float* a = in(c, 0);
  float* o = out(c);
  for (int64_t i = 0, n = loom::plugin::numel(c.outputs[0]); i < n; ++i) o[i] = a[i] > 0 ? a[i] : 0;
}

constexpr uint64_t kFloat32 = LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32);

}  // namespace

void register_kernels(loom::plugin::Registrar& r) {
  r.kernel("add", "mydev", loom::plugin::kernel<add>, kFloat32);
  r.kernel("mul", "mydev", loom::plugin::kernel<mul>, kFloat32);
  r.kernel("relu", "mydev", loom::plugin::kernel<relu>, kFloat32);
}

}  // namespace mydev
