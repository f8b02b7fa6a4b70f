// loom/detail/small_vector.h — a vector with inline storage for N elements.
//
// Shapes, strides and per-call argument lists are almost always short; keeping
// them inline saves a heap allocation per tensor and per op call, which is
// most of the per-op overhead budget.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace loom::detail {

template <class T, size_t N>
class SmallVector {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  template <class It>
  SmallVector(It first, It last) { assign(first, last); }
  explicit SmallVector(size_t n) { resize(n); }
  SmallVector(size_t n, const T& v) { resize(n, v); }
  SmallVector(std::span<const T> s) { assign(s.begin(), s.end()); }  // NOLINT
  template <class R, class = decltype(std::declval<const R&>().begin()),
            class = std::enable_if_t<!std::is_same_v<R, SmallVector>>>
  explicit SmallVector(const R& range) { assign(range.begin(), range.end()); }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { move_from(std::move(o)); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      clear();
      release_heap();
      move_from(std::move(o));
    }
    return *this;
  }
  ~SmallVector() {
    clear();
    release_heap();
  }

  template <class It>
  void assign(It first, It last) {
    clear();
    reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) new (data_ + size_++) T(*first);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  operator std::span<const T>() const { return {data_, size_}; }  // NOLINT

  void reserve(size_t n) {
    if (n <= cap_) return;
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    for (size_t i = 0; i < size_; ++i) {
      new (fresh + i) T(std::move(data_[i]));
      data_[i].~T();
    }
    release_heap();
    data_ = fresh;
    cap_ = n;
  }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == cap_) reserve(cap_ * 2);
    return *new (data_ + size_++) T(std::forward<Args>(args)...);
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void pop_back() { data_[--size_].~T(); }

  void resize(size_t n) {  // default-constructs in place: no temporaries
    if (n < size_) {
      while (size_ > n) pop_back();
      return;
    }
    reserve(n);
    while (size_ < n) new (data_ + size_++) T();
  }
  void resize(size_t n, const T& v) {
    if (n < size_) {
      while (size_ > n) pop_back();
      return;
    }
    reserve(n);
    while (size_ < n) new (data_ + size_++) T(v);
  }
  void clear() {
    while (size_ > 0) data_[--size_].~T();
  }
  void insert(size_t pos, const T& v) {
    emplace_back(v);
    std::rotate(data_ + pos, data_ + size_ - 1, data_ + size_);
  }
  void erase(size_t pos) {
    std::move(data_ + pos + 1, data_ + size_, data_ + pos);
    pop_back();
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return data_ != inline_ptr(); }
  T* inline_ptr() { return reinterpret_cast<T*>(inline_); }
  const T* inline_ptr() const { return reinterpret_cast<const T*>(inline_); }
  void release_heap() {
    if (on_heap()) ::operator delete(data_, std::align_val_t(alignof(T)));
    data_ = inline_ptr();
    cap_ = N;
  }
  void move_from(SmallVector&& o) {
    if (o.on_heap()) {
      data_ = o.data_;
      size_ = o.size_;
      cap_ = o.cap_;
      o.data_ = o.inline_ptr();
      o.size_ = 0;
      o.cap_ = N;
    } else {
      for (size_t i = 0; i < o.size_; ++i) new (data_ + size_++) T(std::move(o.data_[i]));
      o.clear();
    }
  }

  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* data_ = inline_ptr();
  size_t size_ = 0;
  size_t cap_ = N;
};

}  // namespace loom::detail

namespace loom {

// A borrowed, read-only run of int64 (sizes, strides, dims). Unlike std::span
// it binds to a braced list, so `zeros({2, 3})` works; such a list lives
// until the end of the full expression, which is all a call needs.
class IntArrayRef {
 public:
  constexpr IntArrayRef() = default;
  constexpr IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"  // the borrow is the point
  constexpr IntArrayRef(std::initializer_list<int64_t> list)  // NOLINT
      : data_(list.begin()), size_(list.size()) {}
#pragma GCC diagnostic pop
  IntArrayRef(std::span<const int64_t> s) : data_(s.data()), size_(s.size()) {}  // NOLINT
  template <size_t N>
  IntArrayRef(const detail::SmallVector<int64_t, N>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <class Alloc>
  IntArrayRef(const std::vector<int64_t, Alloc>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  // One value: randn(3), sum(0), max_pool2d(x, 2), as libtorch reads a bare
  // integer. The value is held inside (copies re-point to their own), so it
  // stays valid wherever the IntArrayRef goes, an optional included.
  constexpr IntArrayRef(int64_t single) : single_(single), data_(&single_), size_(1) {}  // NOLINT
  constexpr IntArrayRef(const IntArrayRef& o)
      : single_(o.single_), data_(o.data_ == &o.single_ ? &single_ : o.data_), size_(o.size_) {}
  constexpr IntArrayRef& operator=(const IntArrayRef& o) {
    single_ = o.single_;
    data_ = o.data_ == &o.single_ ? &single_ : o.data_;
    size_ = o.size_;
    return *this;
  }

  constexpr const int64_t* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const int64_t* begin() const { return data_; }
  constexpr const int64_t* end() const { return data_ + size_; }
  constexpr int64_t operator[](size_t i) const { return data_[i]; }
  constexpr int64_t back() const { return data_[size_ - 1]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  bool operator==(IntArrayRef o) const {  // a plain loop: shapes are short, memcmp's call is not
    if (size_ != o.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (data_[i] != o.data_[i]) return false;
    return true;
  }

 private:
  int64_t single_ = 0;  // the value of a one-value IntArrayRef
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

// Sizes and strides: five dims inline covers nearly every real tensor.
using DimVector = detail::SmallVector<int64_t, 5>;

}  // namespace loom
