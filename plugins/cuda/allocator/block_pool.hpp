// block_pool.hpp — blocks of device memory and the free lists that hold them.
//
// A segment is one raw_alloc; it is cut into Blocks that tile it exactly,
// linked in address order through prev/next. The first block of a segment
// is never merged away (merging keeps the lower block), so it names the
// segment for as long as the segment is held.
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <vector>

namespace loom::gpu::detail {

struct Block {
  char* ptr = nullptr;
  size_t size = 0;           // bytes of the segment this block covers
  void* stream = nullptr;    // the stream that allocated its segment
  bool in_small_pool = false;  // its segment's size class, fixed for life
  bool allocated = false;    // handed out and not yet freed
  int pending_events = 0;    // events that must complete before reuse
  Block* prev = nullptr;     // neighbours in the same segment, or nullptr
  Block* next = nullptr;
  // Streams other than `stream` that used the block while it was allocated
  // (record_stream); each gets an event when the block is freed.
  std::vector<void*> stream_uses;

  // Free, and no other stream can still be reading or writing it.
  bool reusable() const { return !allocated && pending_events == 0; }
  bool whole_segment() const { return prev == nullptr && next == nullptr; }
};

// The reusable blocks of one size class (small or large). Invariant: every
// block in the pool is reusable(), and no two neighbours in one segment are
// both in the pool (they are merged first).
class BlockPool {
 public:
  void insert(Block* block) { blocks_.insert(block); }
  void erase(Block* block) { blocks_.erase(block); }
  bool empty() const { return blocks_.empty(); }

  // Best fit on `stream`: the smallest block of at least `size` bytes, the
  // lowest address among equals; nullptr when none. Blocks of other streams
  // are never returned: the work queued on their stream may still use them.
  Block* best_fit(void* stream, size_t size) const {
    Block key;
    key.stream = stream;
    key.size = size;
    auto it = blocks_.lower_bound(&key);  // key.ptr == nullptr sorts first
    if (it == blocks_.end() || (*it)->stream != stream) return nullptr;
    return *it;
  }

  // The blocks that span a whole segment (what empty_cache can return).
  std::vector<Block*> whole_segments() const {
    std::vector<Block*> out;
    for (Block* b : blocks_)
      if (b->whole_segment()) out.push_back(b);
    return out;
  }

 private:
  // Ordered by (stream, size, address): one lower_bound finds the best fit.
  struct ByStreamSizeAddress {
    bool operator()(const Block* a, const Block* b) const {
      if (a->stream != b->stream) return std::less<void*>()(a->stream, b->stream);
      if (a->size != b->size) return a->size < b->size;
      return std::less<char*>()(a->ptr, b->ptr);
    }
  };
  std::set<Block*, ByStreamSizeAddress> blocks_;
};

}  // namespace loom::gpu::detail
