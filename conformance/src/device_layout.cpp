// device_layout.cpp — permuted / offset inputs built on the device.
#include "device_layout.h"

#include <loom/loom.h>

#include <sstream>

namespace loom::conformance {

Tensor non_contiguous_on(const Tensor& t, Device device) {
  if (t.numel() == 0) return t.to(device);
  const auto sizes = t.sizes();
  const size_t n = sizes.size();
  std::vector<int64_t> strides(n);
  if (n >= 2) {
    int64_t s = 1;  // column-major: the first dimension moves fastest
    for (size_t d = 0; d < n; ++d) {
      strides[d] = s;
      s *= std::max<int64_t>(sizes[d], 1);
    }
  } else if (n == 1) {
    strides[0] = 2;
  }
  constexpr int64_t kOffset = 1;
  int64_t extent = kOffset + 1;
  for (size_t d = 0; d < n; ++d) extent += strides[d] * (sizes[d] - 1);
  // Fill the view on the host, then move the whole buffer: the device
  // allocates the larger buffer and the case sees a view into it.
  Tensor host = zeros({extent}, t.dtype());
  host.as_strided(sizes, strides, kOffset).copy_(t);
  return host.to(device).as_strided(sizes, strides, kOffset);
}

namespace {
template <class F>
std::string list_of(const std::vector<std::optional<Tensor>>& ts, F&& dims) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < ts.size(); ++i) {
    os << (i ? "," : "");
    if (!ts[i] || !ts[i]->defined()) {
      os << "null";
      continue;
    }
    os << '[';
    IntArrayRef d = dims(*ts[i]);
    for (size_t k = 0; k < d.size(); ++k) os << (k ? "," : "") << d[k];
    os << ']';
  }
  os << ']';
  return os.str();
}
}  // namespace

std::string shapes_of(const std::vector<std::optional<Tensor>>& ts) {
  return list_of(ts, [](const Tensor& t) { return t.sizes(); });
}
std::string strides_of(const std::vector<std::optional<Tensor>>& ts) {
  return list_of(ts, [](const Tensor& t) { return t.strides(); });
}

}  // namespace loom::conformance
