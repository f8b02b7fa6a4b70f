// module.cpp — the model file and Module (loom/jit/module.h).
#include <loom/jit/module.h>

#include <loom/error.h>
#include <loom/io.h>

#include <cerrno>
#include <cstdlib>

namespace loom::jit {
namespace {

using detail::cat;

constexpr const char* kVersionKey = "loom.jit.format_version";
constexpr const char* kGraphKey = "loom.jit.graph";

StateDict tensors_of(const Graph& graph) {
  graph.validate();
  StateDict sd;
  for (const Value* v : graph.inputs()) {
    if (v->kind == InputKind::Input) continue;
    auto it = graph.tensors().find(v->name);
    LOOM_CHECK(it != graph.tensors().end(), "jit::save: the graph holds no tensor for %", v->name);
    sd.insert(v->name, it->second);
  }
  return sd;
}

Metadata metadata_of(const Graph& graph) {
  return {{kVersionKey, std::to_string(kFormatVersion)}, {kGraphKey, graph.str()}};
}

// Every value and Device argument of the graph on `to`.
void retarget(Graph& g, Device to) {
  for (Value* v : g.inputs()) v->device = to;
  for (const auto& n : g.nodes()) {
    for (Value* v : n->outputs) v->device = to;
    for (Attr& a : n->attrs)
      if (a.kind == Attr::Kind::Device) a.device = to;
  }
}

Module from_loaded(io::Loaded loaded, const std::string& source, std::optional<Device> map_location) {
  auto fail = [&](const std::string& what) { throw Error(cat("jit::load: ", source, ": ", what)); };
  const auto version = loaded.metadata.find(kVersionKey);
  const auto text = loaded.metadata.find(kGraphKey);
  if (version == loaded.metadata.end() || text == loaded.metadata.end())
    fail(cat("not a loom.jit model file (its metadata has no '", kVersionKey, "' and '", kGraphKey,
             "'; loom::io::load reads plain safetensors files)"));
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(version->second.c_str(), &end, 10);
  if (version->second.empty() || *end != '\0' || errno || v < 1)
    fail(cat("format version '", version->second, "' is not a positive integer"));
  if (v > kFormatVersion)
    fail(cat("written by a newer loom (format version ", v, "); this build reads versions up to ", kFormatVersion));
  Graph g;
  try {
    g = parse_graph(text->second, map_location);
  } catch (const std::exception& e) {
    fail(cat("its graph does not parse: ", e.what()));
  }
  // Exactly the tensors the graph names, with the types it says.
  for (const Value* in : g.inputs()) {
    if (in->kind == InputKind::Input) continue;
    const Tensor* t = loaded.tensors.find(in->name);
    if (!t) fail(cat("the graph's ", in->kind == InputKind::Parameter ? "parameter" : "constant", " %", in->name,
                     " has no tensor in the file"));
    if (t->dtype() != in->dtype || !std::equal(t->sizes().begin(), t->sizes().end(), in->sizes.begin(), in->sizes.end()))
      fail(cat("tensor '", in->name, "' is ", name(t->dtype()), shape_str(t->sizes()), " but the graph expects ",
               name(in->dtype), shape_str(in->sizes)));
    Tensor loaded = map_location ? t->to(*map_location) : t->to(in->device);
    // Parameters come back trainable, as a loaded torch.jit module's do.
    if (in->kind == InputKind::Parameter && is_floating_point(loaded.dtype())) loaded.requires_grad_(true);
    // The file keeps the wrapped-number flag on the value; the tensor (read
    // for this graph alone) gets it here, before any run can share it.
    if (in->wrapped_number) loaded.impl()->set_wrapped_number(true);
    g.tensors()[in->name] = loaded;
  }
  for (const auto& [n, t] : loaded.tensors)
    if (!g.find(n) || g.find(n)->producer || g.find(n)->kind == InputKind::Input)
      fail(cat("tensor '", n, "' is not a parameter or constant of its graph"));
  return Module(std::make_shared<Graph>(std::move(g)));
}

}  // namespace

Module& Module::to(Device device) {
  for (auto& [name, t] : graph_->tensors()) t = t.to(device);
  retarget(*graph_, device);
  return *this;
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const Value* v : graph_->inputs())
    if (v->kind == InputKind::Parameter) out.emplace_back(v->name, graph_->tensors().at(v->name));
  return out;
}

std::vector<uint8_t> serialize(const Graph& graph) { return io::serialize(tensors_of(graph), metadata_of(graph)); }

void save(const Graph& graph, const std::string& path) { io::save(path, tensors_of(graph), metadata_of(graph)); }

Module load(const std::string& path, std::optional<Device> map_location) {
  // Tensors on the CPU first: the checks need no device, and a file traced
  // on a GPU loads on a machine without one when map_location says where.
  return from_loaded(io::load_with_metadata(path, io::LoadOptions{}), path, map_location);
}

Module load_buffer(const uint8_t* data, size_t size, std::optional<Device> map_location, const std::string& source) {
  io::Loaded loaded;
  try {
    loaded = io::load_buffer(data, size, io::LoadOptions{});
  } catch (const Error& e) {  // the safetensors reader names "<buffer>"
    throw Error(e.kind(), cat("jit::load: ", source, ": ", e.what()));
  }
  return from_loaded(std::move(loaded), source, map_location);
}

}  // namespace loom::jit
