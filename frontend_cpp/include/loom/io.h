// loom/io.h — save and load tensors as safetensors files.
//
//   loom::StateDict sd;
//   sd.insert("fc.weight", w);
//   loom::io::save("model.safetensors", sd, {{"epoch", "3"}});
//   loom::StateDict back = loom::io::load("model.safetensors");          // on the CPU
//   auto [tensors, meta] = loom::io::load_with_metadata("model.safetensors", "cuda");
//   loom::io::save("t.safetensors", t);   Tensor t2 = loom::io::load_tensor("t.safetensors");
//
// The format (https://github.com/huggingface/safetensors), all little-endian:
//   8 bytes   N, the header length (unsigned)
//   N bytes   JSON {name: {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//             "__metadata__": {str: str}}, padded with spaces to a multiple of 8
//   the rest  every tensor's bytes, row-major, at its offsets (relative to here); the
//             tensors tile this buffer exactly, with no gaps or overlaps
// dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL (every loom dtype).
//
// Writing follows the safetensors library byte for byte: "__metadata__"
// first (only when there is metadata), then the tensors sorted by descending
// alignment (8-byte dtypes, then 4, 2, 1; the library's dtype order) and by
// name, so every tensor's data is aligned to its element size. Python's
// loom.save and the safetensors library read these files, and loom reads
// theirs. A single tensor is stored under the name "__tensor__", as
// loom.save(tensor) does.
//
// Reading validates the whole header before touching any data and throws
// loom::Error naming the file and the problem; it never reads outside the
// file. Files of kMapThreshold bytes or more are memory-mapped: the CPU
// tensors loaded from them alias the mapping (copy-on-write, so writing to a
// tensor never changes the file) and the mapping lives as long as any of
// them. Smaller files are read and copied. Changing or truncating a file
// while tensors still map it is undefined, as with any mmap reader.
#pragma once

#include <loom/device.h>
#include <loom/state_dict.h>
#include <loom/tensor.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loom::io {

// The name loom.save (Python) and io::save(path, Tensor) give a single tensor.
inline constexpr std::string_view kTensorKey = "__tensor__";
// Metadata key of Python's nested checkpoints (loom.save of dicts/lists of
// tensors); reserved, so io::save refuses it in user metadata.
inline constexpr std::string_view kStructureKey = "loom.structure";
// Headers larger than this are refused, as the safetensors library does.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Files at least this large are memory-mapped rather than read (Auto mode).
inline constexpr size_t kMapThreshold = size_t{1} << 20;

// ---- saving -------------------------------------------------------------------

// Writes `tensors` (on any device; copied to the CPU to write) and `metadata`.
// Throws loom::Error naming the file when it cannot be written, and before
// writing anything when a name is "__metadata__" or "__tensor__", not valid
// UTF-8, or a metadata key is "loom.structure".
void save(const std::string& path, const StateDict& tensors, const Metadata& metadata = {});
// One tensor, under "__tensor__" (what loom.load in Python returns as a tensor).
void save(const std::string& path, const Tensor& tensor, const Metadata& metadata = {});
// The file's bytes, in memory.
std::vector<uint8_t> serialize(const StateDict& tensors, const Metadata& metadata = {});

// ---- loading --------------------------------------------------------------------

enum class MapMode {
  Auto,  // map files of kMapThreshold bytes or more, read smaller ones
  Map,   // always map (CPU tensors alias the file's pages where aligned)
  Read,  // always read into memory and copy
};

struct LoadOptions {
  // Where the tensors go; the CPU when empty.
  std::optional<Device> device;
  MapMode map = MapMode::Auto;
};

struct Loaded {
  StateDict tensors;  // in the order of the file's header
  Metadata metadata;  // the file's "__metadata__" (empty when it has none)
};

// Every tensor in the file, in header order.
StateDict load(const std::string& path, const LoadOptions& options = {});
StateDict load(const std::string& path, Device device);
Loaded load_with_metadata(const std::string& path, const LoadOptions& options = {});
Loaded load_with_metadata(const std::string& path, Device device);
// A file written by save(path, Tensor) or Python's loom.save(tensor): its
// "__tensor__" entry, or its only tensor. Throws naming the file otherwise.
Tensor load_tensor(const std::string& path, const LoadOptions& options = {});
Tensor load_tensor(const std::string& path, Device device);

// A whole file held in memory; the tensors are copies (`data` may go after).
Loaded load_buffer(const uint8_t* data, size_t size, const LoadOptions& options = {});

// ---- the parser, on a byte buffer (also the fuzzing entry point) ----------------

// One header entry, validated against the buffer.
struct TensorEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to Header::data_start
  uint64_t end = 0;
};

struct Header {
  std::vector<TensorEntry> entries;  // in header order
  Metadata metadata;
  uint64_t data_start = 0;  // 8 + N: where the tensor bytes begin
};

// Parses and validates `data[0, size)` as a safetensors file. `source` names
// it in error messages (a path, or "<buffer>"). Throws loom::Error for any
// malformation; never reads outside the buffer.
Header parse_safetensors(const uint8_t* data, size_t size, std::string_view source = "<buffer>");

// "F32" for Float32, and back (nullopt for a name safetensors does not know
// or loom cannot hold).
std::string_view safetensors_dtype_name(DType dtype);
std::optional<DType> dtype_from_safetensors_name(std::string_view name);

// ---- PyTorch's checkpoint format ----------------------------------------------------------
// The zip archive torch.save writes (torch_checkpoint.cpp): <name>/data.pkl
// (the pickled object) and one <name>/data/<key> record per storage.
// Python's torch.load and loom.load read what these write, and these read
// what torch.save writes (state dicts, optimizer states, tensors, lists)
// without PyTorch.

// What the file's object is: an OrderedDict of name -> tensor, one tensor
// (the StateDict's single entry), or a list (the entries in order).
enum class TorchTopLevel { Dict, Tensor, List };
void save_torch(const std::string& path, const StateDict& tensors, TorchTopLevel top = TorchTopLevel::Dict);
std::vector<uint8_t> serialize_torch(const StateDict& tensors, TorchTopLevel top = TorchTopLevel::Dict,
                                     std::string_view archive_name = "archive");
// The archive's record prefix torch.save uses for `path` (its file stem).
std::string torch_archive_name(const std::string& path);

// Every tensor of a torch.save file, flattened: dict keys and list indices
// joined with "." (a file of one tensor gives the key ""), Python ints,
// floats and bools as 0-d int64 / float64 / bool tensors; strings and None
// are skipped. Reading runs no code: any global other than the tensor
// rebuilders, OrderedDict, torch.Size, torch.device and the storage types
// is refused, naming it. On the CPU unless `device` is given.
StateDict load_torch(const std::string& path, std::optional<Device> device = std::nullopt);
StateDict load_torch_buffer(const uint8_t* data, size_t size, std::string_view source = "<buffer>");

}  // namespace loom::io
