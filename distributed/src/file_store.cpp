// file_store.cpp — FileStore: keys in an append-only, flock()ed log file.
//
// A record is: u8 'S' (set) or 'D' (delete), u32 key length, the key, and
// for 'S' a u32 value length and the value (little-endian lengths). Each
// call opens the file, takes flock() (shared to read, exclusive to write),
// reads the records appended since this store last looked, and, to write,
// appends one record with a single write(). Opening per call keeps the view
// right when the file is deleted and made again; a file that shrank or is a
// different file from last time is read from the start.
#include <loom/distributed/store.h>

#include "counter.h"
#include "messages.h"
#include "wire.h"  // load_u32

#include <loom/error.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace loom::distributed {

struct detail::FileStoreState {
  std::mutex mu;  // guards everything below, and orders this process's calls
  dev_t dev = 0;
  ino_t ino = 0;
  off_t parsed = 0;  // bytes of the file read into `data`
  std::unordered_map<std::string, std::vector<uint8_t>> data;
};

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void io_error(const std::string& path, const char* what, int err) {
  throw Error(ErrorKind::Device, loom::detail::cat("FileStore: cannot ", what, " '", path, "': ",
                                                   std::strerror(err)));
}

// The store's file, open and flock()ed for one call.
class LockedFile {
 public:
  LockedFile(const std::string& path, int lock) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) io_error(path, "open", errno);
    while (::flock(fd_, lock) != 0) {
      if (errno != EINTR) {
        const int err = errno;
        ::close(fd_);
        io_error(path, "lock", err);
      }
    }
  }
  ~LockedFile() { ::close(fd_); }  // releases the lock
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  const std::string& path_;
};

void put_u32(std::vector<uint8_t>& out, size_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Brings `s` up to date with the file; returns its size. Bytes past the last
// complete record (only a writer that died mid-write leaves them) are left
// unparsed.
off_t refresh(detail::FileStoreState& s, const LockedFile& f) {
  struct stat st {};
  if (::fstat(f.fd(), &st) != 0) io_error(f.path(), "stat", errno);
  if (st.st_dev != s.dev || st.st_ino != s.ino || st.st_size < s.parsed) {
    s.dev = st.st_dev;
    s.ino = st.st_ino;
    s.parsed = 0;
    s.data.clear();
  }
  if (st.st_size == s.parsed) return st.st_size;
  std::vector<uint8_t> buf(static_cast<size_t>(st.st_size - s.parsed));
  size_t got = 0;
  while (got < buf.size()) {
    const ssize_t k = ::pread(f.fd(), buf.data() + got, buf.size() - got, s.parsed + off_t(got));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) io_error(f.path(), "read", errno);
    if (k == 0) break;
    got += static_cast<size_t>(k);
  }
  size_t pos = 0;
  for (;;) {
    const size_t left = got - pos;
    if (left < 5) break;
    const uint8_t tag = buf[pos];
    if (tag != 'S' && tag != 'D')
      throw Error(ErrorKind::Device,
                  loom::detail::cat("FileStore: '", f.path(), "' is not a FileStore file or is corrupt (byte ",
                                    s.parsed + off_t(pos), "); use a fresh file for each job"));
    const size_t key_len = detail::load_u32(&buf[pos + 1]);
    size_t end = pos + 5 + key_len;
    if (end > got) break;
    std::string key(reinterpret_cast<const char*>(&buf[pos + 5]), key_len);
    if (tag == 'D') {
      s.data.erase(key);
    } else {
      if (end + 4 > got) break;
      const size_t value_len = detail::load_u32(&buf[end]);
      if (end + 4 + value_len > got) break;
      s.data[std::move(key)].assign(buf.begin() + std::ptrdiff_t(end + 4),
                                    buf.begin() + std::ptrdiff_t(end + 4 + value_len));
      end += 4 + value_len;
    }
    pos = end;
  }
  s.parsed += off_t(pos);
  return st.st_size;
}

// Appends one record under the exclusive lock `f` and applies it to `s`.
void append(detail::FileStoreState& s, const LockedFile& f, char tag, const std::string& key,
            const std::vector<uint8_t>* value) {
  const off_t size = refresh(s, f);
  // Under the exclusive lock a partial tail can only be a dead writer's:
  // cut it, or every later record would be read out of step.
  if (size != s.parsed && ::ftruncate(f.fd(), s.parsed) != 0) io_error(f.path(), "truncate", errno);
  std::vector<uint8_t> rec;
  rec.reserve(9 + key.size() + (value ? value->size() : 0));
  rec.push_back(static_cast<uint8_t>(tag));
  put_u32(rec, key.size());
  rec.insert(rec.end(), key.begin(), key.end());
  if (value) {
    put_u32(rec, value->size());
    rec.insert(rec.end(), value->begin(), value->end());
  }
  size_t put = 0;
  while (put < rec.size()) {
    const ssize_t k = ::write(f.fd(), rec.data() + put, rec.size() - put);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      const int err = k < 0 ? errno : EIO;
      if (::ftruncate(f.fd(), s.parsed) != 0) {
        // The partial record stays; the next writer cuts it.
      }
      io_error(f.path(), "write", err);
    }
    put += static_cast<size_t>(k);
  }
  s.parsed += off_t(rec.size());
  if (value)
    s.data[key] = *value;
  else
    s.data.erase(key);
}

void check_size(const std::string& path, const std::string& key, size_t value_size) {
  if (key.size() > UINT32_MAX || value_size > UINT32_MAX)
    throw Error(ErrorKind::InvalidArgument,
                loom::detail::cat("FileStore: key or value of '", key.substr(0, 64), "' exceeds 4 GiB (file ",
                                  path, ")"));
}

}  // namespace

FileStore::FileStore(std::string path, std::chrono::milliseconds timeout)
    : Store(timeout), path_(std::move(path)), state_(std::make_unique<detail::FileStoreState>()) {
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(ErrorKind::InvalidArgument,
                loom::detail::cat("FileStore: cannot open '", path_, "': ", std::strerror(errno)));
  ::close(fd);
}

FileStore::~FileStore() = default;

void FileStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  check_size(path_, key, value.size());
  std::lock_guard<std::mutex> lock(state_->mu);
  LockedFile f(path_, LOCK_EX);
  append(*state_, f, 'S', key, &value);
}

std::vector<uint8_t> FileStore::get(const std::string& key) {
  wait({key}, timeout());
  std::lock_guard<std::mutex> lock(state_->mu);
  const auto it = state_->data.find(key);
  // wait() saw the key; only a delete_key since could make it vanish again.
  if (it == state_->data.end())
    throw Error(ErrorKind::NotFound,
                loom::detail::cat("FileStore: key '", key, "' was deleted as it was read (file ", path_, ")"));
  return it->second;
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  std::lock_guard<std::mutex> lock(state_->mu);
  LockedFile f(path_, LOCK_EX);
  refresh(*state_, f);
  const auto it = state_->data.find(key);
  int64_t value = 0;
  const std::string why = detail::counter_add(it == state_->data.end() ? nullptr : &it->second, delta, value);
  if (!why.empty())
    throw Error(ErrorKind::InvalidArgument,
                loom::detail::cat("FileStore: add('", key, "', ", delta, "): ", why, " (file ", path_, ")"));
  const auto bytes = detail::counter_bytes(value);
  append(*state_, f, 'S', key, &bytes);
  return value;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(state_->mu);
  LockedFile f(path_, LOCK_SH);
  refresh(*state_, f);
  return std::all_of(keys.begin(), keys.end(),
                     [&](const std::string& k) { return state_->data.count(k) != 0; });
}

void FileStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0)
    throw Error(ErrorKind::InvalidArgument,
                loom::detail::cat("FileStore: wait: the timeout must be positive, got ", timeout.count(),
                                  " ms"));
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    std::vector<std::string> missing;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      LockedFile f(path_, LOCK_SH);
      refresh(*state_, f);
      for (const auto& k : keys)
        if (!state_->data.count(k)) missing.push_back(k);
    }
    if (missing.empty()) return;
    const auto now = Clock::now();
    if (now >= deadline) {
      throw Error(ErrorKind::NotFound,
                  loom::detail::cat("FileStore: ", missing.size() == 1 ? "key " : "keys ",
                                    detail::quoted_keys(missing), " not set within ",
                                    detail::format_duration(timeout), " (file ", path_, ")"));
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

bool FileStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> lock(state_->mu);
  LockedFile f(path_, LOCK_EX);
  refresh(*state_, f);
  if (!state_->data.count(key)) return false;
  append(*state_, f, 'D', key, nullptr);
  return true;
}

}  // namespace loom::distributed
