#include "digits.h"

#include "numpy_permutation.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>
#include <vector>

namespace loom_samples {
namespace {

constexpr int64_t kPixels = 64;
constexpr int64_t kClasses = 10;

struct Digits {
  std::vector<float> pixels;  // row-major [n, 64], already scaled to [0, 1]
  std::vector<int64_t> labels;
};

std::string read_gzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) throw loom::Error("digits: cannot open " + path);
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(file, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  int code = Z_OK;
  std::string why = n < 0 ? gzerror(file, &code) : "";
  gzclose(file);
  if (n < 0) throw loom::Error("digits: " + path + ": not a readable gzip file: " + why);
  return text;
}

// Parses "p0,...,p63,label" lines; pixels must be 0..16, labels 0..9.
Digits parse_csv(const std::string& text, const std::string& path) {
  Digits d;
  std::istringstream lines(text);
  std::string line;
  for (int64_t line_no = 1; std::getline(lines, line); ++line_no) {
    if (line.empty() || line == "\r") continue;
    auto fail = [&](const std::string& what) {
      throw loom::Error("digits: " + path + ":" + std::to_string(line_no) + ": " + what);
    };
    const char* p = line.c_str();
    for (int64_t col = 0; col <= kPixels; ++col) {
      char* end = nullptr;
      errno = 0;
      double v = std::strtod(p, &end);
      if (end == p || errno != 0) fail("column " + std::to_string(col + 1) + " is not a number");
      if (col < kPixels) {
        if (v < 0 || v > 16) fail("pixel " + std::to_string(col + 1) + " is outside 0..16");
        d.pixels.push_back(static_cast<float>(v) / 16.0f);
      } else {
        if (v != static_cast<int64_t>(v) || v < 0 || v >= kClasses) fail("label is not 0..9");
        d.labels.push_back(static_cast<int64_t>(v));
      }
      p = end;
      bool last = col == kPixels;
      if (!last && *p != ',') fail("expected 65 comma-separated columns, got " + std::to_string(col + 1));
      if (last && *p != '\0' && *p != '\r') fail("more than 65 columns");
      ++p;
    }
  }
  if (d.labels.empty()) throw loom::Error("digits: " + path + ": no rows");
  return d;
}

// digits.py's fallback shape: 1797 noisy copies of 10 random prototypes.
// (Drawn with std::mt19937_64, so not the same numbers as numpy's.)
Digits synthetic_digits(uint64_t seed) {
  constexpr int64_t n = 1797;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(0.f, 1.f);
  std::normal_distribution<float> noise(0.f, 0.15f);
  std::uniform_int_distribution<int64_t> label(0, kClasses - 1);
  std::vector<float> centers(kClasses * kPixels);
  for (auto& c : centers) c = uniform(rng);
  Digits d;
  for (int64_t i = 0; i < n; ++i) {
    int64_t y = label(rng);
    d.labels.push_back(y);
    for (int64_t j = 0; j < kPixels; ++j)
      d.pixels.push_back(std::clamp(centers[y * kPixels + j] + noise(rng), 0.f, 1.f));
  }
  return d;
}

// Rows `order[begin, end)` of the set, as tensors.
std::pair<loom::Tensor, loom::Tensor> take(const Digits& d, const std::vector<int64_t>& order,
                                           size_t begin, size_t end) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (size_t i = begin; i < end; ++i) {
    auto row = d.pixels.begin() + order[i] * kPixels;
    x.insert(x.end(), row, row + kPixels);
    y.push_back(d.labels[order[i]]);
  }
  auto rows = static_cast<int64_t>(end - begin);
  return {loom::from_vector(x, {rows, kPixels}), loom::from_vector(y, {rows})};
}

}  // namespace

DigitsSplit load_digits(double test_fraction, uint64_t seed, const std::string& path) {
  if (!(test_fraction > 0 && test_fraction < 1))
    throw loom::Error("digits: test_fraction must be in (0, 1), got " + std::to_string(test_fraction));
  DigitsSplit split;
  Digits d;
  if (std::filesystem::exists(path)) {
    d = parse_csv(read_gzip(path), path);
  } else {
    std::cerr << "digits: " << path
              << " not found (install python3-sklearn); using a seeded synthetic set\n";
    d = synthetic_digits(seed);
    split.synthetic = true;
  }
  auto n = static_cast<int64_t>(d.labels.size());
  auto order = numpy_permutation(n, seed);
  auto n_test = static_cast<size_t>(static_cast<double>(n) * test_fraction);  // int() truncates
  std::tie(split.x_test, split.y_test) = take(d, order, 0, n_test);
  std::tie(split.x_train, split.y_train) = take(d, order, n_test, order.size());
  return split;
}

}  // namespace loom_samples
