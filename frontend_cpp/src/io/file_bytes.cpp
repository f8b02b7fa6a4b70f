// file_bytes.cpp — FileBytes: mmap for large files, read() for small ones.
#include "file_bytes.h"

#include <loom/error.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace loom::io::detail {
namespace {

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  throw Error(loom::detail::cat(path, ": cannot ", what, ": ", std::strerror(err)));
}

// Closes the descriptor on every path out of open().
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::shared_ptr<FileBytes> FileBytes::open(const std::string& path, MapMode mode) {
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) fail(path, "open", errno);
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) fail(path, "stat", errno);
  if (!S_ISREG(st.st_mode)) throw Error(loom::detail::cat(path, ": not a regular file"));
  std::shared_ptr<FileBytes> bytes(new FileBytes);
  bytes->size_ = static_cast<size_t>(st.st_size);

  const bool map = bytes->size_ > 0 && (mode == MapMode::Map ||
                                        (mode == MapMode::Auto && bytes->size_ >= kMapThreshold));
  if (map) {
    void* p = ::mmap(nullptr, bytes->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd, 0);
    if (p == MAP_FAILED) fail(path, "memory-map", errno);
    bytes->data_ = static_cast<uint8_t*>(p);
    bytes->mapped_ = true;
    return bytes;
  }
  bytes->read_.resize(bytes->size_);
  size_t done = 0;
  while (done < bytes->size_) {
    const ssize_t got = ::read(file.fd, bytes->read_.data() + done, bytes->size_ - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(path, "read", errno);
    if (got == 0) break;  // the file shrank under us: parse what we have
    done += static_cast<size_t>(got);
  }
  bytes->read_.resize(done);
  bytes->size_ = done;
  bytes->data_ = bytes->read_.data();
  return bytes;
}

FileBytes::~FileBytes() {
  if (mapped_) ::munmap(data_, size_);
}

}  // namespace loom::io::detail
