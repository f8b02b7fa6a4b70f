// transfer.h (core-internal) — byte movement between devices.
#pragma once

#include <loom/tensor.h>

namespace loom::detail {

// The element range [first, last] of the storage a tensor touches
// (empty when last < first).
struct Span {
  int64_t first;
  int64_t last;
  bool empty() const { return last < first; }
};
Span storage_span(const TensorImpl& t);

// Raw bytes between any two devices, through each plugin's copy functions
// (staged through host memory between two non-host device types). Complete
// on return, except with `non_blocking` when the host side is pinned memory
// of the device's type: then the copy may still be queued on the device's
// current stream (Tensor::to).
void copy_bytes(Device dst_dev, void* dst, Device src_dev, const void* src, size_t nbytes,
                bool non_blocking = false);

// A copy of the storage span `t` covers, on `to`, viewed with t's sizes and
// strides: the layout is kept, so broadcast or strided views stay cheap.
Tensor span_copy(const TensorImpl& t, Device to);
// Writes `from` (a span_copy of `to`) back over to's span.
void span_write_back(const Tensor& from, const TensorImpl& to);

// While alive, the autograd node a copy_ on this thread records is named
// `name` instead of CopyBackwards: clone() and contiguous() copy through
// copy_, and PyTorch names their nodes CloneBackward0; to() ToCopyBackward0.
class CopyNodeName {
 public:
  explicit CopyNodeName(const char* name) : saved_(current()) { current() = name; }
  ~CopyNodeName() { current() = saved_; }
  CopyNodeName(const CopyNodeName&) = delete;
  CopyNodeName& operator=(const CopyNodeName&) = delete;
  // nullptr outside any scope.
  static const char*& current() {
    thread_local const char* name = nullptr;
    return name;
  }

 private:
  const char* saved_;
};

}  // namespace loom::detail
