// mnist.cpp — datasets::MNIST: the IDX image and label files.
//
// IDX: a big-endian header (magic 0x00000803 for images, 0x00000801 for
// labels, then the count, and rows and cols for images), then one unsigned
// byte per pixel or label.
#include <loom/data/datasets/mnist.h>
#include <loom/error.h>
#include <loom/ops.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <vector>

namespace loom::data::datasets {

namespace {

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LOOM_CHECK(in, "MNIST: cannot open ", path, " (expected the uncompressed IDX file there)");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

uint32_t big_endian_u32(const std::vector<uint8_t>& bytes, size_t at) {
  return (uint32_t{bytes[at]} << 24) | (uint32_t{bytes[at + 1]} << 16) | (uint32_t{bytes[at + 2]} << 8) |
         uint32_t{bytes[at + 3]};
}

// The header's u32 fields after the magic, checked against `magic` and the size.
std::vector<uint32_t> header(const std::vector<uint8_t>& bytes, const std::string& path, uint32_t magic,
                             size_t fields, size_t item_bytes_per_count) {
  const size_t header_bytes = 4 * (1 + fields);
  LOOM_CHECK(bytes.size() >= header_bytes, "MNIST: ", path, " is ", bytes.size(), " bytes, shorter than its header");
  LOOM_CHECK(big_endian_u32(bytes, 0) == magic, "MNIST: ", path, " has magic number ", big_endian_u32(bytes, 0),
             ", expected ", magic, " (is it gzip-compressed, or the other file of the pair?)");
  std::vector<uint32_t> out;
  size_t per_item = item_bytes_per_count;
  for (size_t f = 0; f < fields; ++f) out.push_back(big_endian_u32(bytes, 4 * (1 + f)));
  for (size_t f = 1; f < fields; ++f) per_item *= out[f];
  const size_t want = header_bytes + size_t{out[0]} * per_item;
  LOOM_CHECK(bytes.size() == want, "MNIST: ", path, " is ", bytes.size(), " bytes; its header describes ", want);
  return out;
}

}  // namespace

MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
  const std::string prefix = root + (train_ ? "/train" : "/t10k");
  const std::string image_path = prefix + "-images-idx3-ubyte", label_path = prefix + "-labels-idx1-ubyte";
  const std::vector<uint8_t> image_bytes = read_all(image_path), label_bytes = read_all(label_path);
  const std::vector<uint32_t> dims = header(image_bytes, image_path, 0x803, 3, 1);
  const std::vector<uint32_t> label_dims = header(label_bytes, label_path, 0x801, 1, 1);
  LOOM_CHECK(dims[0] == label_dims[0], "MNIST: ", image_path, " holds ", dims[0], " images but ", label_path,
             " holds ", label_dims[0], " labels");
  const int64_t n = dims[0], rows = dims[1], cols = dims[2];
  images_ = from_vector(std::vector<uint8_t>(image_bytes.begin() + 16, image_bytes.end()), {n, 1, rows, cols})
                .to(kFloat)
                .div_(loom::full({}, 255.0));
  targets_ = from_vector(std::vector<uint8_t>(label_bytes.begin() + 8, label_bytes.end()), {n}).to(kLong);
}

Example<> MNIST::get(size_t index) {
  const auto n = static_cast<size_t>(images_.size(0));
  LOOM_CHECK(index < n, "MNIST: index ", index, " out of range for ", n, " images");
  const auto i = static_cast<int64_t>(index);
  return {images_[i], targets_[i]};
}

std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

}  // namespace loom::data::datasets
