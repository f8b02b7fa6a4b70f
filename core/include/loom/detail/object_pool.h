// loom/detail/object_pool.h — per-thread free lists for the objects every op
// allocates (TensorImpl, StorageImpl).
//
// A small op allocates a TensorImpl and a StorageImpl and frees the previous
// ones; through malloc that was about a tenth of a 1-element add. Deriving
// from Pooled<T> routes T's new/delete through a bounded per-thread list.
// An object may be freed on another thread than the one that made it: the
// block simply joins that thread's list. After a thread's list is torn down
// (thread exit), its frees go straight to the global allocator.
#pragma once

#include <cstddef>
#include <new>

// Thread-locals on the per-op path use the initial-exec model: one load from
// the thread pointer instead of a __tls_get_addr call (about 25
// instructions, several times per op). The cost is a few bytes of the
// static TLS block, which glibc keeps spare for libraries loaded later
// (as loom is from Python) — loom's hot thread-locals total under 100 bytes.
#define LOOM_FAST_TLS __attribute__((tls_model("initial-exec")))

namespace loom::detail {

struct FreeList {
  void* head = nullptr;
  int count = 0;
  bool dead = false;  // set once the thread's drain has run
};

template <class T>
class Pooled {
 public:
  static void* operator new(size_t n) {
    FreeList& l = list();
    if (n == sizeof(T) && l.head) [[likely]] {
      void* p = l.head;
      l.head = *static_cast<void**>(p);
      --l.count;
      return p;
    }
    drain_guard();  // registers the thread-exit drain on first use
    return ::operator new(n);
  }
  static void operator delete(void* p, size_t n) {
    FreeList& l = list();
    if (n == sizeof(T) && !l.dead && l.count < kMaxCached) [[likely]] {
      *static_cast<void**>(p) = l.head;
      l.head = p;
      ++l.count;
      return;
    }
    ::operator delete(p);
  }

 private:
  static constexpr int kMaxCached = 256;

  // Trivially destructible, so it stays usable during thread teardown.
  static FreeList& list() {
    static thread_local FreeList l LOOM_FAST_TLS;
    return l;
  }
  struct Drain {
    ~Drain() {
      FreeList& l = list();
      while (l.head) {
        void* next = *static_cast<void**>(l.head);
        ::operator delete(l.head);
        l.head = next;
      }
      l.count = 0;
      l.dead = true;
    }
  };
  static void drain_guard() { static thread_local Drain d; (void)d; }
};

}  // namespace loom::detail
