// parse.cpp — io::parse_safetensors: the header of a safetensors file,
// validated completely before any tensor data is touched.
//
// Every check here exists because a file can come from anywhere: nothing in
// the header is trusted, sizes are multiplied with overflow checks, and no
// JSON value of unknown size is ever printed into a message (a fuzzer's
// deeply nested array would blow the stack in dump()).
#include <loom/io.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <tuple>

namespace loom::io {
namespace {

using Json = nlohmann::ordered_json;  // keeps the header's order

class Reject {
 public:
  explicit Reject(std::string_view source) : source_(source) {}
  template <class... Args>
  [[noreturn]] void operator()(const Args&... args) const {
    throw Error(loom::detail::cat(source_, ": ", args...));
  }

 private:
  std::string_view source_;
};

uint64_t read_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Parses the JSON text, refusing duplicate keys in any object (the JSON
// library would silently keep one of them).
Json parse_json(std::string_view text, const Reject& reject) {
  std::vector<std::set<std::string>> keys_per_object;
  std::string duplicate;
  Json::parser_callback_t on_event = [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        keys_per_object.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        keys_per_object.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!keys_per_object.back().insert(parsed.get<std::string>()).second && duplicate.empty())
          duplicate = parsed.get<std::string>();
        break;
      default:
        break;
    }
    return true;
  };
  Json header;
  try {
    header = Json::parse(text.begin(), text.end(), on_event);
  } catch (const Json::exception& e) {
    reject("header is not valid JSON: ", e.what());
  }
  if (!duplicate.empty()) reject("header has the key '", duplicate, "' more than once");
  return header;
}

Metadata read_metadata(const Json& value, const Reject& reject) {
  if (!value.is_object()) reject("__metadata__ must be an object of strings, not ", value.type_name());
  Metadata metadata;
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) reject("__metadata__ value of '", key, "' must be a string, not ", v.type_name());
    metadata.emplace(key, v.get<std::string>());
  }
  return metadata;
}

bool is_integer(const Json& v) { return v.is_number_integer(); }  // false for bools and floats

TensorEntry read_entry(const std::string& name, const Json& info, uint64_t buffer_len,
                       const Reject& reject) {
  if (!info.is_object()) reject("tensor '", name, "': header entry must be an object, not ", info.type_name());
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!info.contains(key)) reject("tensor '", name, "': header entry has no '", key, "'");
  const Json& dtype = info.at("dtype");
  const Json& shape = info.at("shape");
  const Json& offsets = info.at("data_offsets");

  TensorEntry entry;
  entry.name = name;
  if (!dtype.is_string()) reject("tensor '", name, "': dtype must be a string, not ", dtype.type_name());
  const auto parsed = dtype_from_safetensors_name(dtype.get_ref<const std::string&>());
  if (!parsed)
    reject("tensor '", name, "': unknown dtype '", dtype.get_ref<const std::string&>(),
           "' (known: F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)");
  entry.dtype = *parsed;

  if (!shape.is_array()) reject("tensor '", name, "': shape must be an array, not ", shape.type_name());
  // `extent` is the product of the sizes with 0 read as 1: the outermost
  // contiguous stride the loader computes. It must fit in int64 even when a
  // zero size makes the tensor empty ([0, 2^62, 2^62] holds no bytes but its
  // strides would overflow).
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t extent = 1;
  bool empty = false;
  for (const Json& d : shape) {
    if (!is_integer(d)) reject("tensor '", name, "': shape holds a ", d.type_name(), ", not an integer");
    if (d.is_number_unsigned() ? false : d.get<int64_t>() < 0)
      reject("tensor '", name, "': shape has the negative size ", d.get<int64_t>());
    const uint64_t size = d.get<uint64_t>();
    if (size > kMax || __builtin_mul_overflow(extent, std::max<uint64_t>(size, 1), &extent) || extent > kMax)
      reject("tensor '", name, "': shape's element count overflows 64 bits (0 counted as 1: its strides must fit)");
    empty |= size == 0;
    entry.shape.push_back(static_cast<int64_t>(size));
  }
  const uint64_t numel = empty ? 0 : extent;
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(itemsize(entry.dtype)), &nbytes))
    reject("tensor '", name, "': shape's byte count overflows 64 bits");

  if (!offsets.is_array() || offsets.size() != 2 || !is_integer(offsets[0]) || !is_integer(offsets[1]) ||
      (!offsets[0].is_number_unsigned() && offsets[0].get<int64_t>() < 0) ||
      (!offsets[1].is_number_unsigned() && offsets[1].get<int64_t>() < 0))
    reject("tensor '", name, "': data_offsets must be two non-negative integers [begin, end]");
  entry.begin = offsets[0].get<uint64_t>();
  entry.end = offsets[1].get<uint64_t>();
  if (entry.begin > entry.end)
    reject("tensor '", name, "': data_offsets [", entry.begin, ", ", entry.end, "] are reversed (begin > end)");
  if (entry.end > buffer_len)
    reject("tensor '", name, "': data_offsets [", entry.begin, ", ", entry.end,
           "] run outside the data buffer of ", buffer_len, " bytes");
  if (entry.end - entry.begin != nbytes)
    reject("tensor '", name, "': data_offsets [", entry.begin, ", ", entry.end, "] hold ",
           entry.end - entry.begin, " bytes, but dtype ", safetensors_dtype_name(entry.dtype), " and shape ",
           shape_str(entry.shape), " need ", nbytes);
  return entry;
}

// The tensors must tile the data buffer exactly, as safetensors requires.
void check_coverage(const std::vector<TensorEntry>& entries, uint64_t buffer_len, const Reject& reject) {
  std::vector<const TensorEntry*> by_offset;
  for (const TensorEntry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorEntry* a, const TensorEntry* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  uint64_t pos = 0;
  for (const TensorEntry* e : by_offset) {
    if (e->begin < pos)
      reject("tensor '", e->name, "': data_offsets [", e->begin, ", ", e->end, "] overlap the previous tensor");
    if (e->begin > pos)
      reject("tensor '", e->name, "': data_offsets [", e->begin, ", ", e->end, "] leave a gap of ",
             e->begin - pos, " bytes before them");
    pos = e->end;
  }
  if (pos != buffer_len)
    reject("data buffer has ", buffer_len, " bytes but its tensors cover only ", pos,
           " (offsets must cover the buffer exactly)");
}

}  // namespace

Header parse_safetensors(const uint8_t* data, size_t size, std::string_view source) {
  const Reject reject(source);
  if (size < 8) reject("not a safetensors file: ", size, " bytes, fewer than the 8-byte header length");
  const uint64_t n = read_le64(data);
  if (n > kMaxHeaderBytes)
    reject("header length ", n, " is larger than the ", kMaxHeaderBytes, "-byte limit");
  if (n > size - 8) reject("header length ", n, " runs past the end of the ", size, "-byte file");
  const std::string_view text(reinterpret_cast<const char*>(data + 8), n);
  if (text.empty() || text.front() != '{') reject("header is not a JSON object (it must start with '{')");

  const Json json = parse_json(text, reject);
  if (!json.is_object()) reject("header is not a JSON object");

  Header header;
  header.data_start = 8 + n;
  const uint64_t buffer_len = size - header.data_start;
  for (const auto& [name, info] : json.items()) {
    if (name == "__metadata__")
      header.metadata = read_metadata(info, reject);
    else
      header.entries.push_back(read_entry(name, info, buffer_len, reject));
  }
  check_coverage(header.entries, buffer_len, reject);
  return header;
}

}  // namespace loom::io
