// What the stream tests on sim share: the stream handle sim's kernel saw,
// and a Stream's handle in the same form.
#pragma once

#include <loom/loom.h>
#include <loom/op_call.h>

#include <cstdint>

namespace sim_test {

// sim_kernel_stream(x): the stream handle sim's kernel received, 0 for the
// default stream.
inline int64_t kernel_stream(const loom::Tensor& x) {
  loom::OpCall call(loom::Dispatcher::instance().op("sim_kernel_stream"));
  call.args.push_back(&x);
  loom::dispatch(call);
  return call.result().item<int64_t>();
}

inline int64_t handle_of(const loom::Stream& s) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(s.native_handle()));
}

}  // namespace sim_test
