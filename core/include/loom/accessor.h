// loom/accessor.h — TensorAccessor, libtorch's typed element access for CPU
// tensors: t.accessor<float, 2>()[i][j] reads and writes element (i, j)
// through the tensor's strides, with no bounds checks (as libtorch's).
#pragma once

#include <loom/error.h>
#include <loom/tensor.h>

#include <cstddef>
#include <cstdint>

namespace loom {

template <class T, size_t N>
class TensorAccessor {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  // Dim 0's element i: a T& for N = 1, else an accessor of the other dims.
  decltype(auto) operator[](int64_t i) const {
    if constexpr (N == 1) return static_cast<T&>(data_[i * strides_[0]]);
    else return TensorAccessor<T, N - 1>(data_ + i * strides_[0], sizes_ + 1, strides_ + 1);
  }
  int64_t size(size_t d) const { return sizes_[d]; }
  int64_t stride(size_t d) const { return strides_[d]; }
  T* data() const { return data_; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

template <class T, size_t N>
TensorAccessor<T, N> Tensor::accessor() const& {
  LOOM_CHECK(dtype() == dtype_of<std::remove_const_t<T>>(), "accessor: the tensor is ", name(dtype()),
             ", not the accessor's element type");
  LOOM_CHECK(dim() == static_cast<int64_t>(N), "accessor: the tensor has ", dim(), " dims, the accessor ", N);
  LOOM_CHECK(device().is_host(), "accessor: the tensor is on ", device().str(), "; copy it to the CPU first");
  return TensorAccessor<T, N>(static_cast<T*>(data_ptr()), impl()->sizes().data(), impl()->strides().data());
}

}  // namespace loom
