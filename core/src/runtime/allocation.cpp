// allocation.cpp — the outputs a call allocates: contiguous tensors on the
// call's device, their byte count checked before anything is allocated.
#include "device_registry.h"

#include <loom/error.h>
#include <loom/op_call.h>

namespace loom::detail {

namespace {
// numel * itemsize, refusing a byte count past INT64_MAX (signed overflow in
// shape_numel would be UB, and a wrapped size a silently small block).
[[gnu::cold, noreturn]] void throw_size_overflow(Device device, DType dtype, IntArrayRef sizes) {
  throw Error(ErrorKind::OutOfMemory,
              cat("cannot allocate a tensor of size ", shape_str(sizes), " and dtype ", name(dtype),
                  " on ", device.str(), ": it needs more than 2^63 bytes"));
}

size_t checked_nbytes(Device device, DType dtype, IntArrayRef sizes) {
  int64_t n = static_cast<int64_t>(itemsize(dtype));
  bool overflow = false;
  for (int64_t s : sizes) {
    if (s == 0) return 0;
    overflow |= __builtin_mul_overflow(n, s, &n);
  }
  if (overflow) [[unlikely]]
    throw_size_overflow(device, dtype, sizes);
  return static_cast<size_t>(n);
}
}  // namespace

Tensor empty_contiguous(Device device, DType dtype, IntArrayRef sizes) {
  const size_t nbytes = checked_nbytes(device, dtype, sizes);
  return Tensor(make_intrusive<TensorImpl>(allocate_storage(device, nbytes), dtype, sizes,
                                           contiguous_strides(sizes), 0));
}

void allocate_outputs(OpCall& call) {
  for (auto& out : call.outputs)
    if (!out.result.defined()) out.result = empty_contiguous(call.device, out.dtype, out.sizes);
}

}  // namespace loom::detail
