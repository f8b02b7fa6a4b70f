// io_fixture_test.cpp — files laid out as Python's loom.save and the
// safetensors library write them (data/safetensors/, made by
// make_fixtures.py) read back exactly.
#include "io_test_tensors.h"

#include <loom/io.h>

#include <catch2/catch.hpp>

#include <string>

using namespace loom_io_test;

namespace {
std::string fixture(const std::string& name) { return std::string(LOOM_IO_TEST_DATA) + "/" + name; }
}  // namespace

TEST_CASE("io: a state dict as Python's loom.save lays it out reads back exactly", "[io]") {
  for (const auto mode : {loom::io::MapMode::Read, loom::io::MapMode::Map}) {
    const loom::io::Loaded f = loom::io::load_with_metadata(fixture("python_state_dict.safetensors"), {{}, mode});
    std::vector<std::string> names;
    for (const Spec& s : specs()) {
      names.push_back(s.name);
      INFO(s.name);
      CHECK(mismatch(s, f.tensors.at(s.name)) == "");
    }
    CHECK(f.tensors.keys() == names);  // header order, which loom.save keeps from the dict
    CHECK(f.metadata == loom::Metadata{{"written_by", "make_fixtures.py"}, {"epoch", "3"}});
  }
}

TEST_CASE("io: loom.save(tensor), the reference layout and empty files read back", "[io]") {
  const loom::Tensor t = loom::io::load_tensor(fixture("python_tensor.safetensors"));
  CHECK(mismatch({"t", loom::DType::Float32, {2, 3}}, t) == "");
  const loom::Tensor attn = loom::io::load(fixture("reference_layout.safetensors")).at("attn.0");
  CHECK(attn.shape() == std::vector<int64_t>{1, 2, 3});
  CHECK(attn.to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
  const loom::io::Loaded empty = loom::io::load_with_metadata(fixture("empty.safetensors"));
  CHECK(empty.tensors.empty());
  CHECK(empty.metadata.empty());
  const loom::io::Loaded meta = loom::io::load_with_metadata(fixture("metadata_only.safetensors"));
  CHECK(meta.tensors.empty());
  CHECK(meta.metadata == loom::Metadata{{"framework", "pt"}});
  // What we write for the same contents is the same bytes.
  CHECK(loom::io::serialize({}, meta.metadata) == read_bytes(fixture("metadata_only.safetensors")));
  CHECK(loom::io::serialize({}) == read_bytes(fixture("empty.safetensors")));
}
