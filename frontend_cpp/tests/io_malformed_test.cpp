// io_malformed_test.cpp — every malformation loom::io::load rejects, each
// with a message naming the file and the problem; and no crash on mangled
// or truncated files.
#include "io_test_tensors.h"

#include <loom/io.h>

#include <catch2/catch.hpp>

#include <random>
#include <algorithm>
#include <string>

using namespace loom_io_test;

namespace {

// A file: length, `header` padded to 8 bytes, then `data_len` zero bytes.
std::vector<uint8_t> file_with(const std::string& header, size_t data_len = 0) {
  std::string text = header;
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<uint8_t> out(8 + text.size() + data_len, 0);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
  std::copy(text.begin(), text.end(), out.begin() + 8);
  return out;
}

// What load() says about `bytes` written to a file (the message must also
// name the file); "" when it loads.
std::string load_error(const std::vector<uint8_t>& bytes) {
  const std::string path = temp_path("bad.safetensors");
  write_bytes(path, bytes);
  try {
    loom::io::load(path);
  } catch (const loom::Error& e) {
    const std::string what = e.what();
    CHECK(what.rfind(path + ": ", 0) == 0);
    return what;
  }
  return "";
}

std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":" + dtype + ",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}";
}

}  // namespace

TEST_CASE("io: the file is too short or its header length is wrong", "[io]") {
  CHECK_THAT(load_error({1, 2, 3}), Catch::Contains("3 bytes, fewer than the 8-byte header length"));
  CHECK_THAT(load_error({}), Catch::Contains("0 bytes, fewer than the 8-byte header length"));
  std::vector<uint8_t> past = {100, 0, 0, 0, 0, 0, 0, 0, '{', '}'};
  CHECK_THAT(load_error(past), Catch::Contains("header length 100 runs past the end of the 10-byte file"));
  std::vector<uint8_t> huge = {0, 0xc2, 0xeb, 0x0b, 0, 0, 0, 0};  // 200,000,000
  CHECK_THAT(load_error(huge), Catch::Contains("header length 200000000 is larger than the 100000000-byte limit"));
  std::vector<uint8_t> wrap = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};  // 8 + N overflows
  CHECK_THAT(load_error(wrap), Catch::Contains("is larger than the 100000000-byte limit"));
}

TEST_CASE("io: the header is not a JSON object", "[io]") {
  CHECK_THAT(load_error(file_with(R"({"a":)")), Catch::Contains("header is not valid JSON"));
  CHECK_THAT(load_error(file_with(R"({} x)")), Catch::Contains("header is not valid JSON"));
  CHECK_THAT(load_error(file_with("[1,2]")), Catch::Contains("header is not a JSON object"));
  CHECK_THAT(load_error(file_with("")), Catch::Contains("header is not a JSON object"));
  CHECK_THAT(load_error(file_with("{\"caf\xff\":1}")), Catch::Contains("header is not valid JSON"));
}

TEST_CASE("io: a header entry misses a field or has the wrong JSON type", "[io]") {
  CHECK_THAT(load_error(file_with(R"({"a":3})")), Catch::Contains("tensor 'a': header entry must be an object"));
  CHECK_THAT(load_error(file_with(R"({"a":{"shape":[],"data_offsets":[0,4]}})", 4)),
             Catch::Contains("tensor 'a': header entry has no 'dtype'"));
  CHECK_THAT(load_error(file_with(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", 4)),
             Catch::Contains("tensor 'a': header entry has no 'shape'"));
  CHECK_THAT(load_error(file_with(R"({"a":{"dtype":"F32","shape":[]}})", 4)),
             Catch::Contains("tensor 'a': header entry has no 'data_offsets'"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "32", "[]", "[0,4]") + "}", 4)),
             Catch::Contains("tensor 'a': dtype must be a string, not number"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"F32\"", "4", "[0,4]") + "}", 4)),
             Catch::Contains("tensor 'a': shape must be an array, not number"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"F32\"", "[1.0]", "[0,4]") + "}", 4)),
             Catch::Contains("tensor 'a': shape holds a number, not an integer"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"F32\"", "[true]", "[0,4]") + "}", 4)),
             Catch::Contains("tensor 'a': shape holds a boolean, not an integer"));
  for (const char* offsets : {"[0]", "[0,4,4]", "[0,\"4\"]", "{}", "[0,4.0]", "[-4,4]"})
    CHECK_THAT(load_error(file_with("{" + entry("a", "\"F32\"", "[]", offsets) + "}", 4)),
               Catch::Contains("tensor 'a': data_offsets must be two non-negative integers [begin, end]"));
  CHECK_THAT(load_error(file_with(R"({"__metadata__":{"k":1}})")),
             Catch::Contains("__metadata__ value of 'k' must be a string, not number"));
  CHECK_THAT(load_error(file_with(R"({"__metadata__":["k"]})")),
             Catch::Contains("__metadata__ must be an object of strings, not array"));
}

TEST_CASE("io: unknown dtypes and bad shapes", "[io]") {
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"F8_E4M3\"", "[1]", "[0,1]") + "}", 1)),
             Catch::Contains("tensor 'a': unknown dtype 'F8_E4M3' (known: F64, F32, F16, BF16"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"F32\"", "[2,-1]", "[0,0]") + "}")),
             Catch::Contains("tensor 'a': shape has the negative size -1"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"U8\"", "[4294967296,4294967296]", "[0,0]") + "}")),
             Catch::Contains("tensor 'a': shape's element count overflows 64 bits"));
  // Empty, yet its contiguous strides (2^62 * 2^62) would overflow int64.
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"F32\"", "[0,4611686018427387904,4611686018427387904]", "[0,0]") + "}")),
             Catch::Contains("tensor 'a': shape's element count overflows 64 bits (0 counted as 1"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"F64\"", "[4611686018427387904]", "[0,0]") + "}")),
             Catch::Contains("tensor 'a': shape's byte count overflows 64 bits"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"U8\"", "[18446744073709551615]", "[0,0]") + "}")),
             Catch::Contains("tensor 'a': shape's element count overflows 64 bits"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"F32\"", "[2]", "[0,4]") + "}", 4)),
             Catch::Contains("tensor 'a': data_offsets [0, 4] hold 4 bytes, but dtype F32 and shape [2] need 8"));
}

TEST_CASE("io: offsets reversed, outside, overlapping, leaving gaps or not covering the buffer", "[io]") {
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"U8\"", "[4]", "[4,0]") + "}", 4)),
             Catch::Contains("tensor 'a': data_offsets [4, 0] are reversed (begin > end)"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"U8\"", "[4]", "[0,4]") + "}", 3)),
             Catch::Contains("tensor 'a': data_offsets [0, 4] run outside the data buffer of 3 bytes"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"U8\"", "[1]", "[18446744073709551615,0]") + "}")),
             Catch::Contains("are reversed"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"U8\"", "[4]", "[0,4]") + "," +
                                  entry("b", "\"U8\"", "[4]", "[2,6]") + "}", 6)),
             Catch::Contains("tensor 'b': data_offsets [2, 6] overlap the previous tensor"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"U8\"", "[4]", "[0,4]") + "," +
                                  entry("b", "\"U8\"", "[4]", "[6,10]") + "}", 10)),
             Catch::Contains("tensor 'b': data_offsets [6, 10] leave a gap of 2 bytes before them"));
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"U8\"", "[4]", "[0,4]") + "}", 6)),
             Catch::Contains("data buffer has 6 bytes but its tensors cover only 4"));
  CHECK_THAT(load_error(file_with("{}", 1)), Catch::Contains("data buffer has 1 bytes but its tensors cover only 0"));
  // Two tensors at the same bytes.
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"U8\"", "[4]", "[0,4]") + "," +
                                  entry("b", "\"U8\"", "[4]", "[0,4]") + "}", 4)),
             Catch::Contains("overlap the previous tensor"));
}

TEST_CASE("io: duplicate names are refused", "[io]") {
  CHECK_THAT(load_error(file_with("{" + entry("a", "\"U8\"", "[2]", "[0,2]") + "," +
                                  entry("a", "\"U8\"", "[2]", "[2,4]") + "}", 4)),
             Catch::Contains("header has the key 'a' more than once"));
  CHECK_THAT(load_error(file_with(R"({"a":{"dtype":"U8","dtype":"U8","shape":[0],"data_offsets":[0,0]}})")),
             Catch::Contains("header has the key 'dtype' more than once"));
}

TEST_CASE("io: missing files and directories are named", "[io]") {
  CHECK_THROWS_WITH(loom::io::load("/nonexistent/x.safetensors"),
                    Catch::Contains("/nonexistent/x.safetensors: cannot open: No such file or directory"));
  CHECK_THROWS_WITH(loom::io::load("/tmp"), Catch::Contains("/tmp: not a regular file"));
}

TEST_CASE("io: truncated and mangled files give loom::Error, never a crash", "[io]") {
  const std::vector<uint8_t> good = read_bytes(std::string(LOOM_IO_TEST_DATA) + "/python_state_dict.safetensors");
  REQUIRE(good.size() > 100);
  for (size_t n = 0; n < good.size(); ++n)
    CHECK_THROWS_AS(loom::io::load_buffer(good.data(), n), loom::Error);
  CHECK(loom::io::load_buffer(good.data(), good.size()).tensors.size() == 12);
  std::mt19937 rng(7);
  int failures = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bad = good;
    for (int k = 0; k < 3; ++k) bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
    try {
      loom::io::load_buffer(bad.data(), bad.size());
    } catch (const loom::Error&) {
      ++failures;
    }
  }
  CHECK(failures > 0);  // most mutations that hit the header are caught
}
