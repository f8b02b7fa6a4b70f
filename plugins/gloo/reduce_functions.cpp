// reduce_function (reduce_functions.hpp).
#include "reduce_functions.hpp"

#include <loom/plugin.hpp>
#include <loom/plugin/dtype_visit.hpp>
#include <loom/plugin/scalar_ops.hpp>

#include <string>

namespace loom::gloo_plugin {
namespace {

template <class T, class Op>
ReduceFn elementwise(Op op) {
  return [op](void* out, const void* a, const void* b, size_t n) {
    T* o = static_cast<T*>(out);
    const T* x = static_cast<const T*>(a);
    const T* y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = op(x[i], y[i]);
  };
}

}  // namespace

ReduceFn reduce_function(int32_t dtype, int32_t reduce_op) {
  return plugin::visit_dtype<plugin::DTypes::All>(dtype, "gloo", "reduction", [&](auto tag) -> ReduceFn {
    using T = decltype(tag);
    switch (reduce_op) {
      case LOOM_COMM_SUM: return elementwise<T>(plugin::ops::Add<T>{plugin::arith_t<T>(1)});
      case LOOM_COMM_PRODUCT: return elementwise<T>(plugin::ops::Mul<T>{});
      case LOOM_COMM_MIN: return elementwise<T>(plugin::ops::Minimum<T>{});
      case LOOM_COMM_MAX: return elementwise<T>(plugin::ops::Maximum<T>{});
      default:
        throw plugin::Failure(LOOM_STATUS_UNSUPPORTED,
                              "gloo: unknown reduce op code " + std::to_string(reduce_op));
    }
  });
}

}  // namespace loom::gloo_plugin
