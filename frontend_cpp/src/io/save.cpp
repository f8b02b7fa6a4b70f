// save.cpp — io::save / io::serialize: safetensors files laid out exactly as
// the safetensors library lays them out (see loom/io.h).
#include "safetensors_dtypes.h"

#include <loom/io.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <tuple>

namespace loom::io {
namespace {

using Json = nlohmann::ordered_json;  // writes keys in insertion order
using Sink = std::function<void(const void* data, size_t n)>;

// Throws unless `s` is valid UTF-8 (JSON text must be).
void check_utf8(const std::string& s, std::string_view what, std::string_view who) {
  try {
    (void)Json(s).dump();
  } catch (const Json::exception&) {
    throw Error(loom::detail::cat(who, ": ", what, " '", s, "' is not valid UTF-8"));
  }
}

// The tensors in file order: descending safetensors dtype rank, then name.
std::vector<const StateDict::Item*> file_order(const StateDict& tensors, std::string_view who) {
  std::vector<const StateDict::Item*> items;
  for (const StateDict::Item& item : tensors) {
    const auto& [name, t] = item;
    if (!t.defined()) throw Error(loom::detail::cat(who, ": tensor '", name, "' is undefined"));
    if (name == "__metadata__")
      throw Error(loom::detail::cat(who, ": '__metadata__' cannot name a tensor (safetensors reserves it)"));
    check_utf8(name, "tensor name", who);
    items.push_back(&item);
  }
  std::sort(items.begin(), items.end(), [](const StateDict::Item* a, const StateDict::Item* b) {
    const int ra = detail::safetensors_rank(a->second.dtype());
    const int rb = detail::safetensors_rank(b->second.dtype());
    return std::tie(rb, a->first) < std::tie(ra, b->first);
  });
  return items;
}

// The header bytes: JSON padded with spaces to a multiple of 8.
std::string header_text(const std::vector<const StateDict::Item*>& items, const Metadata& metadata,
                        std::string_view who) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto& [key, value] : metadata) {
      if (key == kStructureKey)
        throw Error(loom::detail::cat(who, ": metadata key '", key,
                                      "' is reserved for loom.save's nested checkpoints"));
      check_utf8(key, "metadata key", who);
      check_utf8(value, "metadata value", who);
      meta[key] = value;
    }
    header["__metadata__"] = std::move(meta);
  }
  uint64_t offset = 0;
  for (const StateDict::Item* item : items) {
    const Tensor& t = item->second;
    const uint64_t n = t.nbytes();
    header[item->first] = Json{{"dtype", safetensors_dtype_name(t.dtype())},
                               {"shape", t.shape()},
                               {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

// Everything about a file that can be wrong is checked here, before the
// file is opened (so a bad name never truncates an existing checkpoint).
struct Prepared {
  std::vector<const StateDict::Item*> items;  // in file order
  std::string header;
};

Prepared prepare(const StateDict& tensors, const Metadata& metadata, std::string_view who) {
  Prepared p;
  p.items = file_order(tensors, who);
  p.header = header_text(p.items, metadata, who);
  return p;
}

void write_prepared(const Prepared& prepared, const Sink& sink) {
  const auto& [items, header] = prepared;
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i));
  sink(length, 8);
  sink(header.data(), header.size());
  for (const StateDict::Item* item : items) {
    // One tensor at a time on the host, row-major (a no-op for contiguous CPU tensors).
    Tensor t = item->second.detach();
    if (!t.device().is_host()) t = t.cpu();
    t = t.contiguous();
    if (t.numel() > 0) sink(t.data_ptr(), t.nbytes());
  }
}

StateDict single(const Tensor& tensor) {
  StateDict sd;
  sd.insert(std::string(kTensorKey), tensor);
  return sd;
}

void check_no_tensor_key(const StateDict& tensors, std::string_view who) {
  if (tensors.contains(kTensorKey))
    throw Error(loom::detail::cat(who, ": the name '", kTensorKey,
                                  "' is reserved for a single saved tensor (save(path, tensor))"));
}

void write_file(const std::string& path, const StateDict& tensors, const Metadata& metadata) {
  const Prepared prepared = prepare(tensors, metadata, path);
  auto close = [](std::FILE* f) { std::fclose(f); };
  std::unique_ptr<std::FILE, decltype(close)> file(std::fopen(path.c_str(), "wb"), close);
  if (!file) throw Error(loom::detail::cat(path, ": cannot open for writing: ", std::strerror(errno)));
  try {
    write_prepared(prepared, [&](const void* data, size_t n) {
      if (std::fwrite(data, 1, n, file.get()) != n)
        throw Error(loom::detail::cat(path, ": write failed: ", std::strerror(errno)));
    });
    if (std::fclose(file.release()) != 0)
      throw Error(loom::detail::cat(path, ": write failed: ", std::strerror(errno)));
  } catch (...) {
    file.reset();
    std::remove(path.c_str());  // no half-written file that looks like a checkpoint
    throw;
  }
}

}  // namespace

void save(const std::string& path, const StateDict& tensors, const Metadata& metadata) {
  check_no_tensor_key(tensors, path);
  write_file(path, tensors, metadata);
}

void save(const std::string& path, const Tensor& tensor, const Metadata& metadata) {
  write_file(path, single(tensor), metadata);
}

std::vector<uint8_t> serialize(const StateDict& tensors, const Metadata& metadata) {
  check_no_tensor_key(tensors, "<buffer>");
  std::vector<uint8_t> out;
  write_prepared(prepare(tensors, metadata, "<buffer>"), [&](const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    out.insert(out.end(), p, p + n);
  });
  return out;
}

}  // namespace loom::io
