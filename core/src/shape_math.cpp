// shape_math.cpp — strides, element counts and printing of shapes: pure
// arithmetic on sizes, kept apart from the tensor machinery so that small
// programs (the fuzz targets of the safetensors reader) can link it alone.
#include <loom/tensor.h>

#include <algorithm>
#include <string>

namespace loom {

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector st(sizes.size(), 1);
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

int64_t shape_numel(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::string shape_str(IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

}  // namespace loom
