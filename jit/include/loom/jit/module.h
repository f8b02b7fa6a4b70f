// loom/jit/module.h — a traced model as a file, and as an object to run.
//
//   loom::jit::save(graph, "model.loom");                 // one safetensors file
//   loom::jit::Module m = loom::jit::load("model.loom", "cuda");
//   auto y = m.forward({x.to("cuda")})[0];
//
// The file is safetensors: the graph's parameters and constants are its
// tensors; its metadata holds "loom.jit.format_version" and
// "loom.jit.graph" (the graph's text form). Loading parses text and
// numbers only — no code runs — and refuses, with an error naming the file
// and the problem, a newer format version, a corrupt or truncated file, a
// graph naming an unknown op, and a tensor the graph does not expect or of
// another dtype or shape than the graph says.
#pragma once

#include <loom/jit/jit.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::jit {

// The format this build writes; it reads this and older ones.
inline constexpr int kFormatVersion = 1;

class Module {
 public:
  explicit Module(std::shared_ptr<Graph> graph) : graph_(std::move(graph)) {}

  // Runs the graph (loom::jit::run).
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) const { return run(*graph_, inputs); }
  // Moves the parameters and constants to `device` and retargets the graph's
  // values (and Device arguments naming the old device) to it.
  Module& to(Device device);
  // A traced graph is always in evaluation form (whatever dropout or batch
  // norm mode it was traced in is in its nodes); kept for libtorch's API.
  Module& eval() { return *this; }
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  const Graph& graph() const { return *graph_; }
  Graph& graph() { return *graph_; }

 private:
  std::shared_ptr<Graph> graph_;
};

void save(const Graph& graph, const std::string& path);
std::vector<uint8_t> serialize(const Graph& graph);
// map_location: where the tensors and the graph go (the file's own devices
// when empty).
Module load(const std::string& path, std::optional<Device> map_location = std::nullopt);
Module load_buffer(const uint8_t* data, size_t size, std::optional<Device> map_location = std::nullopt,
                   const std::string& source = "<buffer>");

}  // namespace loom::jit
