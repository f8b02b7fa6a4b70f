// load.cpp — io::load*: tensors from a parsed safetensors file, aliasing a
// memory-mapped file where they can, copying otherwise.
#include "file_bytes.h"

#include <loom/io.h>
#include <loom/ops.h>

#include <cstring>

namespace loom::io {
namespace {

using detail::FileBytes;

// A storage deleter that drops one reference to the file's bytes.
void release_file(void* ctx, int32_t, void*, size_t) { delete static_cast<std::shared_ptr<FileBytes>*>(ctx); }

// A CPU tensor holding a copy of `bytes`. BOOL bytes other than 0 and 1 are
// read as true: kernels assume a bool is 0 or 1.
Tensor copy_tensor(const TensorEntry& e, const uint8_t* bytes) {
  Tensor t = empty(e.shape, e.dtype, cpu_device());
  const size_t n = static_cast<size_t>(e.end - e.begin);
  if (n == 0) return t;
  auto* out = static_cast<uint8_t*>(t.data_ptr());
  if (e.dtype == DType::Bool) {
    for (size_t i = 0; i < n; ++i) out[i] = bytes[i] != 0;
  } else {
    std::memcpy(out, bytes, n);
  }
  return t;
}

// A CPU tensor viewing the mapped file in place. Only for data aligned to its
// element size (kernels assume natural alignment) and not BOOL (whose bytes
// copy_tensor checks).
bool can_alias(const TensorEntry& e, const uint8_t* bytes) {
  return e.end > e.begin && e.dtype != DType::Bool &&
         reinterpret_cast<uintptr_t>(bytes) % itemsize(e.dtype) == 0;
}

Tensor alias_tensor(const TensorEntry& e, uint8_t* bytes, const std::shared_ptr<FileBytes>& file) {
  const size_t n = static_cast<size_t>(e.end - e.begin);
  Storage storage = wrap_storage(cpu_device(), bytes, n,
                                 StorageDeleter{release_file, new std::shared_ptr<FileBytes>(file)});
  return Tensor(loom::detail::make_intrusive<TensorImpl>(std::move(storage), e.dtype, e.shape,
                                                         contiguous_strides(e.shape), 0));
}

// The tensors of `header` over `data`; `file` (null for a caller's buffer)
// is the mapping tensors may alias.
Loaded make_tensors(Header header, uint8_t* data, const std::shared_ptr<FileBytes>& file,
                    const LoadOptions& options) {
  Loaded out;
  for (const TensorEntry& e : header.entries) {
    uint8_t* bytes = data + header.data_start + e.begin;
    Tensor t = file && file->mapped() && can_alias(e, bytes) ? alias_tensor(e, bytes, file) : copy_tensor(e, bytes);
    if (options.device && *options.device != t.device()) t = t.to(*options.device);
    out.tensors.insert(e.name, std::move(t));
  }
  out.metadata = std::move(header.metadata);
  return out;
}

Tensor single_tensor(Loaded loaded, const std::string& path) {
  if (const Tensor* t = loaded.tensors.find(kTensorKey)) return *t;
  if (loaded.tensors.size() == 1) return loaded.tensors.begin()->second;
  throw Error(loom::detail::cat(path, ": holds ", loaded.tensors.size(), " tensors and none named '",
                                kTensorKey, "'; use io::load for a state dict"));
}

}  // namespace

Loaded load_with_metadata(const std::string& path, const LoadOptions& options) {
  const std::shared_ptr<FileBytes> file = FileBytes::open(path, options.map);
  Header header = parse_safetensors(file->data(), file->size(), path);
  return make_tensors(std::move(header), file->data(), file, options);
}

Loaded load_with_metadata(const std::string& path, Device device) {
  return load_with_metadata(path, LoadOptions{device});
}

StateDict load(const std::string& path, const LoadOptions& options) {
  return load_with_metadata(path, options).tensors;
}

StateDict load(const std::string& path, Device device) { return load(path, LoadOptions{device}); }

Tensor load_tensor(const std::string& path, const LoadOptions& options) {
  return single_tensor(load_with_metadata(path, options), path);
}

Tensor load_tensor(const std::string& path, Device device) { return load_tensor(path, LoadOptions{device}); }

Loaded load_buffer(const uint8_t* data, size_t size, const LoadOptions& options) {
  Header header = parse_safetensors(data, size, "<buffer>");
  // Only copies are made from a caller's buffer, so it is never written.
  return make_tensors(std::move(header), const_cast<uint8_t*>(data), nullptr, options);
}

}  // namespace loom::io
