// zip_records.cpp — see zip_records.h. The layout (APPNOTE): per record a
// local header (signature 0x04034b50) then its data; a central directory of
// one entry per record (0x02014b50); the end-of-directory record
// (0x06054b50). Sizes fit 32 bits here (records of 4 GiB or more are
// refused when writing, and zip64 archives when reading).
#include "zip_records.h"

#include <loom/error.h>

#include <zlib.h>

#include <cstring>

namespace loom::io::zip {
namespace {

constexpr uint32_t kLocal = 0x04034b50, kCentral = 0x02014b50, kEnd = 0x06054b50;
constexpr size_t kAlign = 64;

void put16(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

uint32_t crc_of(const std::vector<uint8_t>& d) {
  uLong c = crc32(0L, Z_NULL, 0);
  size_t at = 0;
  while (at < d.size()) {  // crc32 takes a uInt length
    const uInt n = static_cast<uInt>(std::min<size_t>(d.size() - at, 1u << 30));
    c = crc32(c, d.data() + at, n);
    at += n;
  }
  return static_cast<uint32_t>(c);
}

struct Reader {
  const uint8_t* p;
  size_t size;
  std::string_view source;

  [[noreturn]] void bad(const std::string& what) const {
    throw Error(detail::cat(source, ": not a valid zip archive (", what, ")"));
  }
  uint32_t u16(size_t at) const {
    if (at + 2 > size) bad("truncated");
    return static_cast<uint32_t>(p[at] | p[at + 1] << 8);
  }
  uint32_t u32(size_t at) const { return u16(at) | u16(at + 2) << 16; }
};

}  // namespace

std::vector<uint8_t> write(const std::vector<Record>& records) {
  std::vector<uint8_t> out, central;
  for (const Record& r : records) {
    LOOM_CHECK(r.data.size() < 0xffffffffull && r.name.size() < 0xffff, "zip: record '", r.name,
               "' is too large for this writer (", r.data.size(), " bytes)");
    const uint32_t crc = crc_of(r.data);
    const size_t offset = out.size();
    // Pad the extra field so the data starts on a 64-byte boundary.
    const size_t header = 30 + r.name.size() + 4;
    const size_t pad = (kAlign - (offset + header) % kAlign) % kAlign;
    put32(out, kLocal);
    put16(out, 20);  // version needed
    put16(out, 0);   // flags
    put16(out, 0);   // stored
    put16(out, 0);   // time
    put16(out, 0x21);  // date: 1980-01-01
    put32(out, crc);
    put32(out, static_cast<uint32_t>(r.data.size()));
    put32(out, static_cast<uint32_t>(r.data.size()));
    put16(out, static_cast<uint32_t>(r.name.size()));
    put16(out, static_cast<uint32_t>(4 + pad));
    out.insert(out.end(), r.name.begin(), r.name.end());
    put16(out, 0x4246);  // 'FB', PyTorch's padding field
    put16(out, static_cast<uint32_t>(pad));
    out.insert(out.end(), pad, 'Z');
    out.insert(out.end(), r.data.begin(), r.data.end());

    put32(central, kCentral);
    put16(central, 20);
    put16(central, 20);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0x21);
    put32(central, crc);
    put32(central, static_cast<uint32_t>(r.data.size()));
    put32(central, static_cast<uint32_t>(r.data.size()));
    put16(central, static_cast<uint32_t>(r.name.size()));
    put16(central, 0);  // extra
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, 0);  // external attributes
    put32(central, static_cast<uint32_t>(offset));
    central.insert(central.end(), r.name.begin(), r.name.end());
  }
  LOOM_CHECK(out.size() < 0xffffffffull, "zip: the archive is too large for this writer");
  const size_t central_at = out.size();
  out.insert(out.end(), central.begin(), central.end());
  put32(out, kEnd);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<uint32_t>(records.size()));
  put16(out, static_cast<uint32_t>(records.size()));
  put32(out, static_cast<uint32_t>(central.size()));
  put32(out, static_cast<uint32_t>(central_at));
  put16(out, 0);
  return out;
}

std::vector<Record> read(const uint8_t* bytes, size_t size, std::string_view source) {
  const Reader r{bytes, size, source};
  // The end-of-directory record: within the last 64 KiB + 22 bytes.
  if (size < 22) r.bad("shorter than an end-of-directory record");
  size_t end = size - 22;
  const size_t stop = size > 65557 ? size - 65557 : 0;
  while (r.u32(end) != kEnd) {
    if (end == stop) r.bad("no end-of-directory record");
    --end;
  }
  const uint32_t count = r.u16(end + 10);
  size_t at = r.u32(end + 16);
  if (count == 0xffff || at == 0xffffffffu) r.bad("zip64 archives are not supported");
  std::vector<Record> out;
  for (uint32_t i = 0; i < count; ++i) {
    if (r.u32(at) != kCentral) r.bad("a broken central directory");
    const uint32_t method = r.u16(at + 10);
    const uint32_t stored = r.u32(at + 20);
    const uint32_t name_len = r.u16(at + 28), extra_len = r.u16(at + 30), comment_len = r.u16(at + 32);
    const uint32_t local = r.u32(at + 42);
    if (at + 46 + name_len > size) r.bad("truncated");
    std::string name(reinterpret_cast<const char*>(bytes + at + 46), name_len);
    if (method != 0)
      throw Error(detail::cat(source, ": record '", name, "' is compressed (method ", method,
                              "); checkpoints store their records uncompressed"));
    if (r.u32(local) != kLocal) r.bad("record '" + name + "' has no local header");
    const size_t data_at = local + 30 + r.u16(local + 26) + r.u16(local + 28);
    if (data_at > size || stored > size - data_at) r.bad("record '" + name + "' runs past the end");
    out.push_back({std::move(name), std::vector<uint8_t>(bytes + data_at, bytes + data_at + stored)});
    at += 46 + name_len + extra_len + comment_len;
  }
  return out;
}

}  // namespace loom::io::zip
