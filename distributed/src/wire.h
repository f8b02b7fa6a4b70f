// wire.h — TCPStore's wire format (internal).
//
// Every message is a frame: u32 body length, then the body. Integers are
// little-endian; `bytes` and `string` are a u32 length and the data; `keys`
// is a u32 count and that many strings. A connection carries one request at
// a time: the client sends a request and reads its reply before the next.
//
//   request body: u8 op, then by op
//     kHello   u32 magic, u32 version         -> u32 version
//     kSet     string key, bytes value         -> (nothing)
//     kGet     string key, i64 timeout_ms      -> bytes value
//     kAdd     string key, i64 delta           -> i64 new value
//     kCheck   keys                            -> u8 all exist
//     kWait    keys, i64 timeout_ms            -> (nothing)
//     kDelete  string key                      -> u8 existed
//   reply body: u8 status, then
//     kOk      the op's result above
//     kTimeout keys (those still missing when the timeout passed)
//     kError   string message (the request was refused; the connection
//              stays usable unless the request was malformed)
//
// A timeout_ms <= 0 means "no deadline". Version bumps on any change here.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace loom::distributed::detail {

inline constexpr uint32_t kWireMagic = 0x4d4f4f4c;  // "LOOM" little-endian
inline constexpr uint32_t kWireVersion = 1;
// The largest frame body either side accepts (a value up to just under 1 GiB).
inline constexpr uint32_t kMaxFrame = 1u << 30;

enum class Op : uint8_t { kHello = 1, kSet, kGet, kAdd, kCheck, kWait, kDelete };
enum class Status : uint8_t { kOk = 0, kTimeout = 1, kError = 2 };

// A frame or body that ends early or carries an impossible length.
struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Builds one frame; finish() patches the length in.
class Writer {
 public:
  Writer() : buf_(4) {}
  Writer& u8(uint8_t v) {
    buf_.push_back(v);
    return *this;
  }
  Writer& u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Writer& i64(int64_t v) {
    const auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<uint8_t>(u >> (8 * i)));
    return *this;
  }
  Writer& bytes(const void* data, size_t n) {
    u32(static_cast<uint32_t>(n));
    const auto* p = static_cast<const uint8_t*>(data);
    buf_.insert(buf_.end(), p, p + n);
    return *this;
  }
  Writer& str(const std::string& s) { return bytes(s.data(), s.size()); }
  Writer& keys(const std::vector<std::string>& ks) {
    u32(static_cast<uint32_t>(ks.size()));
    for (const auto& k : ks) str(k);
    return *this;
  }
  // Throws WireError when the body exceeds kMaxFrame.
  std::vector<uint8_t> finish() && {
    const size_t body = buf_.size() - 4;
    if (body > kMaxFrame) throw WireError("message larger than 1 GiB");
    for (int i = 0; i < 4; ++i) buf_[i] = static_cast<uint8_t>(body >> (8 * i));
    return std::move(buf_);
  }

 private:
  std::vector<uint8_t> buf_;
};

inline uint32_t load_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// Reads one body; every read throws WireError past its end.
class Reader {
 public:
  Reader(const uint8_t* data, size_t n) : p_(data), end_(data + n) {}
  uint8_t u8() { return *take(1); }
  uint32_t u32() { return load_u32(take(4)); }
  int64_t i64() {
    const uint8_t* p = take(8);
    uint64_t u = 0;
    for (int i = 7; i >= 0; --i) u = u << 8 | p[i];
    return static_cast<int64_t>(u);
  }
  std::vector<uint8_t> bytes() {
    const uint32_t n = u32();
    const uint8_t* p = take(n);
    return {p, p + n};
  }
  std::string str() {
    const uint32_t n = u32();
    const uint8_t* p = take(n);
    return {reinterpret_cast<const char*>(p), n};
  }
  std::vector<std::string> keys() {
    const uint32_t n = u32();
    // Each key takes at least its 4-byte length: refuse counts the body
    // cannot hold before reserving for them.
    if (n > static_cast<size_t>(end_ - p_) / 4) throw WireError("key count past the end");
    std::vector<std::string> out;
    out.reserve(n);
    for (uint32_t i = 0; i < n; ++i) out.push_back(str());
    return out;
  }
  bool done() const { return p_ == end_; }

 private:
  const uint8_t* take(size_t n) {
    if (n > static_cast<size_t>(end_ - p_)) throw WireError("message ends early");
    const uint8_t* p = p_;
    p_ += n;
    return p;
  }
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace loom::distributed::detail
