// io_test_tensors.h — the tensors that the safetensors tests, the fixture
// files (data/safetensors/make_fixtures.py) and the Python cross-check
// (io_python_crosscheck.py) all agree on: one per dtype, plus a 0-d and an
// empty tensor, each filled by a formula so every side can rebuild it.
#pragma once

#include <loom/loom.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

namespace loom_io_test {

struct Spec {
  std::string name;
  loom::DType dtype;
  std::vector<int64_t> shape;
};

// Insertion order is deliberately not the file order safetensors uses, and
// puts a 1-byte tensor first so Python's loom.save (which keeps insertion
// order) misaligns what follows.
inline std::vector<Spec> specs() {
  using loom::DType;
  return {{"u8", DType::UInt8, {3}},        {"f32", DType::Float32, {2, 3}},
          {"f64", DType::Float64, {2, 2}},  {"f16", DType::Float16, {5}},
          {"bf16", DType::BFloat16, {2, 2}}, {"i64", DType::Int64, {3}},
          {"i32", DType::Int32, {1, 3}},    {"i16", DType::Int16, {4}},
          {"i8", DType::Int8, {2, 2}},      {"flag", DType::Bool, {5}},
          {"scalar", DType::Float32, {}},   {"empty", DType::Float32, {0, 4}}};
}

// Element i of every tensor: (i - 2) / 2 for floats, i - 2 for signed,
// i for unsigned, i % 2 for bool. All exact in every dtype.
inline double value_at(loom::DType dtype, int64_t i) {
  using loom::DType;
  if (loom::is_floating_point(dtype)) return static_cast<double>(i - 2) / 2;
  if (dtype == DType::Bool) return static_cast<double>(i % 2);
  if (dtype == DType::UInt8) return static_cast<double>(i);
  return static_cast<double>(i - 2);
}

inline loom::Tensor make(const Spec& s) {
  const int64_t n = loom::shape_numel(s.shape);
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(value_at(s.dtype, i));
  return loom::from_vector(v, s.shape).to(s.dtype);
}

inline loom::StateDict make_all() {
  loom::StateDict sd;
  for (const Spec& s : specs()) sd.insert(s.name, make(s));
  return sd;
}

// Empty when `t` is exactly what make(s) gives; else what differs.
inline std::string mismatch(const Spec& s, const loom::Tensor& t) {
  if (!t.defined()) return s.name + ": missing";
  if (t.dtype() != s.dtype) return s.name + ": dtype " + std::string(loom::name(t.dtype()));
  if (t.shape() != s.shape) return s.name + ": shape " + loom::shape_str(t.sizes());
  const std::vector<double> got = t.to(loom::DType::Float64).to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != value_at(s.dtype, static_cast<int64_t>(i)))
      return s.name + ": element " + std::to_string(i) + " is " + std::to_string(got[i]);
  return "";
}

// A fresh path under the temp directory, unique per process.
inline std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("loom_io_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace loom_io_test
