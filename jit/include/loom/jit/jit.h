// loom/jit/jit.h — capturing a program into a Graph and running it.
//
//   loom::jit::Graph g = loom::jit::trace(
//       [&](const std::vector<loom::Tensor>& in) { return std::vector<loom::Tensor>{model.forward(in[0])}; },
//       {example}, model.named_parameters());
//   auto out = loom::jit::run(g, {x});
//
// trace runs the program once and records every catalog op it calls (not
// the ops those ops run underneath): the example inputs become the graph's
// inputs, the named tensors its parameters, and any other tensor the
// program reads a constant the graph holds. Control flow is unrolled, as in
// torch.jit.trace; shapes are those of the example.
#pragma once

#include <loom/jit/graph.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace loom::jit {

using Program = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct TraceOptions {
  // Names of the inputs ("input0", ... when empty or short).
  std::vector<std::string> input_names;
  // The first dimension is the batch: the graph then runs on any batch
  // size. Inputs whose dim 0 equals the first input's become `?` in their
  // type, so do the values computed from them with that leading size, and
  // the sizes of view and expand nodes on them say -1 there. Other
  // arguments keep their traced values (a narrow or arange over the batch
  // is not followed).
  bool dynamic_batch = false;
};

// Throws loom::Error when the program does something a graph cannot hold:
// a view made outside the catalog's ops (named), a Generator object, an
// output that is not a tensor the trace saw or an input.
Graph trace(const Program& program, const std::vector<Tensor>& inputs,
            const std::vector<std::pair<std::string, Tensor>>& parameters = {}, const TraceOptions& options = {});

// Runs the graph on `inputs` (one per Input-kind graph input, in order):
// each node through the dispatcher, parameters and constants from the
// graph. An input of another dtype, device, rank or size (but for a `?`
// batch dimension) is refused with an error naming the input and both types.
std::vector<Tensor> run(const Graph& graph, const std::vector<Tensor>& inputs);

}  // namespace loom::jit
