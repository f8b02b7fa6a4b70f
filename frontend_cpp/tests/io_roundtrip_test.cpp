// io_roundtrip_test.cpp — loom::io writes what it reads back, lays files out
// byte for byte as the safetensors library does, and maps large files.
#include "io_test_tensors.h"

#include <loom/io.h>
#include <loom/loom.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <algorithm>
#include <string>

using namespace loom_io_test;

namespace {

void check_all(const loom::StateDict& sd) {
  REQUIRE(sd.size() == specs().size());
  for (const Spec& s : specs()) {
    INFO(s.name);
    const loom::Tensor* t = sd.find(s.name);
    REQUIRE(t);
    CHECK(mismatch(s, *t) == "");
    CHECK(t->device() == loom::cpu_device());
  }
}

// Little-endian u64 + text, as a safetensors file starts.
std::vector<uint8_t> header_bytes(const std::string& text) {
  std::vector<uint8_t> out(8 + text.size());
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(text.size() >> (8 * i));
  std::copy(text.begin(), text.end(), out.begin() + 8);
  return out;
}

}  // namespace

TEST_CASE("io: every dtype, 0-d and empty tensors and metadata round-trip", "[io]") {
  const loom::Metadata meta{{"epoch", "3"}, {"note", "h\u00e9llo \"quoted\""}};
  for (const auto mode : {loom::io::MapMode::Read, loom::io::MapMode::Map}) {
    const std::string path = temp_path("all.safetensors");
    loom::io::save(path, make_all(), meta);
    const loom::io::Loaded back = loom::io::load_with_metadata(path, {std::nullopt, mode});
    check_all(back.tensors);
    CHECK(back.metadata == meta);
    check_all(loom::io::load(path));
  }
}

TEST_CASE("io: tensors are written in safetensors order, aligned", "[io]") {
  const std::string path = temp_path("order.safetensors");
  loom::io::save(path, make_all());
  const std::vector<uint8_t> bytes = read_bytes(path);
  const loom::io::Header h = loom::io::parse_safetensors(bytes.data(), bytes.size(), path);
  std::vector<std::string> names;
  for (const auto& e : h.entries) {
    names.push_back(e.name);
    CHECK((h.data_start + e.begin) % loom::itemsize(e.dtype) == 0);
  }
  // I64, F64, F32 (by name), I32, BF16, F16, I16, I8, U8, BOOL.
  CHECK(names == std::vector<std::string>{"i64", "f64", "empty", "f32", "scalar", "i32", "bf16", "f16",
                                          "i16", "i8", "u8", "flag"});
  CHECK(h.data_start % 8 == 0);
  // load keeps the file's order.
  CHECK(loom::io::load(path).keys() == names);
}

TEST_CASE("io: files are byte-identical to the safetensors library's", "[io]") {
  // The library's own test vectors: one F32 tensor; no tensors; metadata only.
  loom::StateDict sd;
  sd.insert("attn.0", loom::arange(6, loom::DType::Float32).reshape({1, 2, 3}));
  std::vector<uint8_t> expected =
      header_bytes(R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})");
  for (float v : {0.f, 1.f, 2.f, 3.f, 4.f, 5.f}) {
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    expected.insert(expected.end(), b, b + 4);
  }
  CHECK(loom::io::serialize(sd) == expected);
  CHECK(loom::io::serialize({}) == header_bytes("{}      "));
  CHECK(loom::io::serialize({}, {{"framework", "pt"}}) ==
        header_bytes(R"({"__metadata__":{"framework":"pt"}}     )"));
  // The committed fixtures are those same bytes.
  CHECK(read_bytes(std::string(LOOM_IO_TEST_DATA) + "/reference_layout.safetensors") == expected);
}

TEST_CASE("io: non-contiguous and grad-requiring tensors are saved by value", "[io]") {
  const loom::Tensor base = loom::arange(12, loom::DType::Float32).reshape({3, 4});
  loom::StateDict sd;
  sd.insert("t", base.t());                       // transposed view
  sd.insert("s", base.narrow(1, 1, 2));           // strided slice
  sd.insert("e", loom::ones({1}).expand({4}));    // stride 0
  loom::Tensor w = loom::ones({2});
  w.requires_grad_();
  sd.insert("w", w);
  const std::string path = temp_path("strided.safetensors");
  loom::io::save(path, sd);
  const loom::StateDict back = loom::io::load(path);
  for (const auto& [name, t] : sd) {
    INFO(name);
    const loom::Tensor& b = back.at(name);
    CHECK(b.shape() == t.shape());
    CHECK(b.is_contiguous());
    CHECK(b.to_vector<float>() == t.contiguous().to_vector<float>());
    CHECK_FALSE(b.requires_grad());
  }
}

TEST_CASE("io: a single tensor is stored under __tensor__", "[io]") {
  const std::string path = temp_path("one.safetensors");
  const loom::Tensor t = loom::arange(6, loom::DType::Int64).reshape({2, 3});
  loom::io::save(path, t);
  CHECK(loom::io::load(path).keys() == std::vector<std::string>{"__tensor__"});
  const loom::Tensor back = loom::io::load_tensor(path);
  CHECK(back.shape() == t.shape());
  CHECK(back.to_vector<int64_t>() == t.to_vector<int64_t>());

  loom::io::save(path, make_all());
  CHECK_THROWS_WITH(loom::io::load_tensor(path), Catch::Contains("12 tensors and none named '__tensor__'"));
  loom::StateDict bad;
  bad.insert("__tensor__", t);
  bad.insert("x", t);
  CHECK_THROWS_WITH(loom::io::save(path, bad), Catch::Contains("reserved for a single saved tensor"));
}

TEST_CASE("io: save refuses reserved and invalid names before touching the file", "[io]") {
  const std::string path = temp_path("keep.safetensors");
  loom::io::save(path, make_all());
  const auto before = read_bytes(path);
  loom::StateDict sd;
  sd.insert("__metadata__", loom::ones({1}));
  CHECK_THROWS_WITH(loom::io::save(path, sd), Catch::Contains("'__metadata__' cannot name a tensor"));
  loom::StateDict bad_utf8;
  bad_utf8.insert("caf\xff", loom::ones({1}));
  CHECK_THROWS_WITH(loom::io::save(path, bad_utf8), Catch::Contains("is not valid UTF-8"));
  CHECK_THROWS_WITH(loom::io::save(path, make_all(), {{"loom.structure", "{}"}}),
                    Catch::Contains("reserved for loom.save's nested checkpoints"));
  loom::StateDict undefined;
  undefined.insert("u", loom::Tensor());
  CHECK_THROWS_WITH(loom::io::save(path, undefined), Catch::Contains("tensor 'u' is undefined"));
  CHECK(read_bytes(path) == before);
  CHECK_THROWS_WITH(loom::io::save("/nonexistent-dir/x.safetensors", make_all()),
                    Catch::Contains("/nonexistent-dir/x.safetensors: cannot open for writing"));
}

TEST_CASE("io: mapped tensors alias the file copy-on-write; others are copies", "[io]") {
  const std::string path = temp_path("mapped.safetensors");
  loom::StateDict sd;
  sd.insert("big", loom::arange(300000, loom::DType::Float32));  // 1.2 MB: mapped by default
  sd.insert("flag", loom::ones({3}, loom::DType::Bool));
  loom::io::save(path, sd);
  const auto before = read_bytes(path);
  REQUIRE(before.size() >= loom::io::kMapThreshold);
  {
    loom::StateDict back = loom::io::load(path);
    loom::Tensor big = back.at("big");
    const auto* p = static_cast<const uint8_t*>(big.data_ptr());
    // Aliases a page mapping, not a fresh allocation: data sits at the file's offset in its page.
    const auto* head = p - (before.size() - big.nbytes() - 3);
    CHECK(reinterpret_cast<uintptr_t>(head) % 4096 == 0);
    big.add_(loom::ones({1}));  // writes go to private pages
    CHECK(big.to_vector<float>()[7] == 8.f);
    CHECK(back.at("flag").to_vector<bool>() == std::vector<bool>{true, true, true});
  }  // the mapping goes with the last tensor
  CHECK(read_bytes(path) == before);
  // Tensors outlive the StateDict that held them.
  loom::Tensor kept = loom::io::load(path).at("big");
  CHECK(kept.to_vector<float>()[299999] == 299999.f);
}

TEST_CASE("io: bool bytes other than 0 and 1 load as true", "[io]") {
  std::vector<uint8_t> file = header_bytes(R"({"b":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}}     )");
  file.insert(file.end(), {0, 1, 7});
  const loom::Tensor b = loom::io::load_buffer(file.data(), file.size()).tensors.at("b");
  const auto* raw = static_cast<const uint8_t*>(b.data_ptr());
  CHECK(std::vector<uint8_t>(raw, raw + 3) == std::vector<uint8_t>{0, 1, 1});
}

TEST_CASE("io: tensors on another device are saved and loaded there", "[io]") {
  const loom::Device sim("sim");
  loom::StateDict sd;
  for (const auto& [name, t] : make_all()) sd.insert(name, t.to(sim));
  const std::string path = temp_path("sim.safetensors");
  loom::io::save(path, sd);
  check_all(loom::io::load(path));
  for (const auto mode : {loom::io::MapMode::Read, loom::io::MapMode::Map}) {
    const loom::StateDict back = loom::io::load(path, {sim, mode});
    for (const Spec& s : specs()) {
      INFO(s.name);
      CHECK(back.at(s.name).device() == sim);
      CHECK(mismatch(s, back.at(s.name).cpu()) == "");
    }
  }
  loom::io::save(path, loom::ones({2}).to(sim));
  CHECK(loom::io::load_tensor(path, sim).device() == sim);
  CHECK(loom::io::load(path, "sim").at("__tensor__").device() == sim);  // a device name converts
}
