// zip_records.h (loom::io internal) — the zip container of PyTorch's
// checkpoint format: uncompressed ("stored") records only, which is all
// torch.save writes. Writing aligns each record's data to 64 bytes (an
// 'FB' extra field, as PyTorch's writer pads); reading accepts any stored
// archive and refuses compressed records, naming them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::io::zip {

struct Record {
  std::string name;
  std::vector<uint8_t> data;
};

// The archive's bytes.
std::vector<uint8_t> write(const std::vector<Record>& records);

// Every record of `bytes` (a whole file); `source` names it in errors.
// Throws loom::Error for anything malformed, never reading outside bytes.
std::vector<Record> read(const uint8_t* bytes, size_t size, std::string_view source);

// Whether `bytes` starts like a zip archive.
inline bool looks_like_zip(const uint8_t* bytes, size_t size) {
  return size >= 4 && bytes[0] == 'P' && bytes[1] == 'K' && bytes[2] == 3 && bytes[3] == 4;
}

}  // namespace loom::io::zip
