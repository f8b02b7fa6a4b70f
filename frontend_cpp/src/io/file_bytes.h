// file_bytes.h — a whole file's bytes, memory-mapped or read (internal).
#pragma once

#include <loom/io.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::io::detail {

class FileBytes {
 public:
  // Opens `path` read-only. Mapped when `mode` asks for it (Auto: for files
  // of kMapThreshold bytes or more); the mapping is private and writable
  // (copy-on-write), so tensors aliasing it may be written without touching
  // the file. Throws loom::Error naming the path and the system's reason.
  static std::shared_ptr<FileBytes> open(const std::string& path, MapMode mode);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  uint8_t* data() { return data_; }
  size_t size() const { return size_; }
  bool mapped() const { return mapped_; }

 private:
  FileBytes() = default;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::vector<uint8_t> read_;  // the bytes when not mapped
};

}  // namespace loom::io::detail
