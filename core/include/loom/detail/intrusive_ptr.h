// loom/detail/intrusive_ptr.h — a pointer to an object that counts its own
// references. One allocation per object (unlike shared_ptr's control block)
// and a single atomic per copy.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace loom::detail {

// Base for refcounted objects; starts at zero and is adopted by IntrusivePtr.
class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  uint32_t use_count() const { return refs_.load(std::memory_order_relaxed); }

 protected:
  ~RefCounted() = default;

 private:
  template <class T>
  friend class IntrusivePtr;
  mutable std::atomic<uint32_t> refs_{0};
};

template <class T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  explicit IntrusivePtr(T* p) : p_(p) { retain(); }
  IntrusivePtr(const IntrusivePtr& o) : p_(o.p_) { retain(); }
  IntrusivePtr(IntrusivePtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  // From a pointer to a derived class (a FormulaNode as a Node).
  template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  IntrusivePtr(const IntrusivePtr<U>& o) : p_(o.get()) {  // NOLINT: implicit like T*
    retain();
  }
  IntrusivePtr& operator=(const IntrusivePtr& o) {
    IntrusivePtr(o).swap(*this);
    return *this;
  }
  IntrusivePtr& operator=(IntrusivePtr&& o) noexcept {
    IntrusivePtr(std::move(o)).swap(*this);
    return *this;
  }
  ~IntrusivePtr() { release(); }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  void reset() { IntrusivePtr().swap(*this); }
  void swap(IntrusivePtr& o) noexcept { std::swap(p_, o.p_); }
  bool operator==(const IntrusivePtr& o) const { return p_ == o.p_; }

 private:
  void retain() {
    if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (p_ && p_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;
  }
  T* p_ = nullptr;
};

template <class T, class... Args>
IntrusivePtr<T> make_intrusive(Args&&... args) {
  return IntrusivePtr<T>(new T(std::forward<Args>(args)...));
}

}  // namespace loom::detail
