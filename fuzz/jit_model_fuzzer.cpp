// jit_model_fuzzer.cpp — libFuzzer target for the model file loader
// (jit/src/module.cpp: jit::load_buffer, which jit::load and loom.jit.load
// call on a file's bytes): safetensors, a format version and a graph in the
// metadata, the graph parsed against the op catalog and checked against the
// weights.
//
// Files come from anywhere. Every input must give a Module or loom::Error;
// a Module it accepts must be safe to run: its graph validates, and every
// parameter and constant has a tensor of the declared dtype and shape.
#include <loom/error.h>
#include <loom/jit/module.h>

#include "fuzz_check.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    loom::jit::Module m = loom::jit::load_buffer(data, size, std::nullopt, "<fuzz>");
    const loom::jit::Graph& g = m.graph();
    g.validate();
    for (const loom::jit::Value* v : g.inputs()) {
      if (v->kind == loom::jit::InputKind::Input) continue;
      auto it = g.tensors().find(v->name);
      LOOM_FUZZ_CHECK(it != g.tensors().end());
      const loom::Tensor& t = it->second;
      LOOM_FUZZ_CHECK(t.dtype() == v->dtype);
      LOOM_FUZZ_CHECK(static_cast<size_t>(t.dim()) == v->sizes.size());
      for (size_t d = 0; d < v->sizes.size(); ++d)
        LOOM_FUZZ_CHECK(v->sizes[d] < 0 || t.sizes()[d] == v->sizes[d]);
    }
  } catch (const loom::Error&) {
    return 0;
  }
  return 0;
}
