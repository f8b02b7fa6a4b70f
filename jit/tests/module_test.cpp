// The model file: save/load round trips (also on another device), and
// hostile files refused with an error naming the problem.
#include <catch2/catch.hpp>
#include <loom/io.h>
#include <loom/jit/module.h>
#include <loom/loom.h>

#include "fuzz_inputs.h"

#include <cstdio>
#include <filesystem>

using loom::Tensor;

namespace {

loom::jit::Graph small_model() {
  loom::manual_seed(3);
  const Tensor w = loom::randn({4, 3}), b = loom::randn({4});
  return loom::jit::trace(
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{loom::relu(loom::nn::functional::linear(in[0], w, b)).view({-1})};
      },
      {loom::randn({2, 3})}, {{"fc.weight", w}, {"fc.bias", b}});
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("loom_jit_") + name)).string();
}

}  // namespace

TEST_CASE("a saved model loads and runs to the same results, on its device or another") {
  const loom::jit::Graph g = small_model();
  const std::string path = temp_path("round_trip.loom");
  loom::jit::save(g, path);
  loom::jit::Module m = loom::jit::load(path);
  CHECK(loom::jit::same_structure(g, m.graph()));
  const Tensor x = loom::randn({2, 3});
  CHECK(loom::allclose(m.forward({x})[0], loom::jit::run(g, {x})[0]));
  CHECK(m.named_parameters().size() == 2);
  // map_location: sim, then back with to().
  const loom::Device sim("sim");
  loom::jit::Module on_sim = loom::jit::load(path, sim);
  const Tensor y = on_sim.forward({x.to(sim)})[0];
  CHECK(y.device() == sim);
  CHECK(loom::allclose(y.cpu(), m.forward({x})[0]));
  CHECK_THROWS_WITH(on_sim.forward({x}), Catch::Contains("on cpu:0 but the graph was traced with float32[2, 3] on sim:0"));
  on_sim.to(loom::cpu_device());
  CHECK(loom::allclose(on_sim.forward({x})[0], m.forward({x})[0]));
  std::remove(path.c_str());
}

TEST_CASE("hostile model files are refused with what is wrong") {
  const loom::jit::Graph g = small_model();
  const auto bytes = loom::jit::serialize(g);
  loom::StateDict tensors;
  for (const auto& [n, t] : g.tensors()) tensors.insert(n, t);
  const std::string text = g.str();
  auto load = [](const std::vector<uint8_t>& b) { return loom::jit::load_buffer(b.data(), b.size(), std::nullopt, "m.loom"); };

  CHECK_THROWS_WITH(load(loom::io::serialize(tensors, {{"loom.jit.format_version", "2"}, {"loom.jit.graph", text}})),
                    Catch::Contains("m.loom: written by a newer loom (format version 2)"));
  CHECK_THROWS_WITH(load(loom::io::serialize(tensors, {})), Catch::Contains("not a loom.jit model file"));
  std::string unknown = text;
  unknown.replace(unknown.find("loom::relu"), 10, "loom::reluz");
  CHECK_THROWS_WITH(load(loom::io::serialize(tensors, {{"loom.jit.format_version", "1"}, {"loom.jit.graph", unknown}})),
                    Catch::Contains("its graph does not parse") && Catch::Contains("unknown op 'reluz'"));
  loom::StateDict wrong = tensors;
  wrong.insert("fc.bias", loom::zeros({5}));
  CHECK_THROWS_WITH(load(loom::io::serialize(wrong, {{"loom.jit.format_version", "1"}, {"loom.jit.graph", text}})),
                    Catch::Contains("tensor 'fc.bias' is float32[5] but the graph expects float32[4]"));
  loom::StateDict extra = tensors;
  extra.insert("stray", loom::zeros({1}));
  CHECK_THROWS_WITH(load(loom::io::serialize(extra, {{"loom.jit.format_version", "1"}, {"loom.jit.graph", text}})),
                    Catch::Contains("tensor 'stray' is not a parameter or constant of its graph"));
  loom::StateDict missing;
  missing.insert("fc.weight", tensors.at("fc.weight"));
  CHECK_THROWS_WITH(load(loom::io::serialize(missing, {{"loom.jit.format_version", "1"}, {"loom.jit.graph", text}})),
                    Catch::Contains("parameter %fc.bias has no tensor in the file"));
  // Truncated anywhere: an error, never a crash.
  for (size_t n : {size_t{0}, size_t{7}, size_t{20}, bytes.size() / 2, bytes.size() - 1})
    CHECK_THROWS(loom::jit::load_buffer(bytes.data(), n));
  CHECK_NOTHROW(loom::jit::load_buffer(bytes.data(), bytes.size()));
}

TEST_CASE("every fuzz corpus and regression input of the model loader loads or errors cleanly") {
  const auto inputs = loom_fuzz::inputs("jit_model");
  REQUIRE(inputs.size() >= 10);
  for (const auto& in : inputs) {
    INFO(in.name());
    bool ok = false;
    try {
      const auto* data = reinterpret_cast<const uint8_t*>(in.bytes.data());
      loom::jit::Module m = loom::jit::load_buffer(data, in.bytes.size(), loom::cpu_device(), in.name());
      ok = true;
      CHECK(m.forward({loom::zeros({2, 3})}).size() == 1);
    } catch (const loom::Error& e) {
      CHECK_THAT(e.what(), Catch::Contains(in.name()) || Catch::Contains("safetensors"));
    }
    if (!in.regression) CHECK(ok == in.valid);
  }
}
