// fused_region.h (jit-internal) — what a `_fused` node holds and does: its
// body (a graph of elementwise ops over the region's inputs), the
// LoomFusedRegion the body becomes for a device's fused_* slots, and the
// node-by-node run a declined region takes.
#pragma once

#include <loom/fusion.h>
#include <loom/jit/graph.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace loom::jit::internal {

// The LOOM_FUSED_* code a node becomes in a region (LOOM_FUSED_CAST for a
// dtype-only _to_copy), or -1 when it cannot join one: not an elementwise
// op of plugin_api.h's table, an in-place op, more than one result, or an
// argument a region cannot carry.
int32_t fusion_code(const Node& n);

// One `_fused` node's body, parsed once per distinct text and shared by
// every node and graph that holds it.
class FusedBody {
 public:
  explicit FusedBody(Graph body);

  const Graph& graph() const { return body_; }
  // The body's ops one by one through the dispatcher (with autograd, when
  // it records): the decline path and the derivative.
  std::vector<Tensor> run_node_by_node(const std::vector<const Tensor*>& inputs) const;
  // The body's derivative: the gradients of the inputs `needs` marks, given
  // the output's gradient (undefined for the others). Runs a graph of the
  // body's backward — its forward recomputed, then the ops' derivative
  // formulas — traced once per input types and optimised, so its
  // elementwise chains are fused regions too.
  std::vector<Tensor> backward(const std::vector<Tensor>& inputs, const std::vector<bool>& needs,
                               const Tensor& grad_output);
  // The kernel `device` compiled for the body, compiling on first use;
  // nullptr when it declined (the body then runs op by op).
  std::shared_ptr<const fusion::Kernel> kernel(Device device);

 private:
  Graph body_;
  std::unique_ptr<fusion::RegionBuilder> spec_;  // nullptr when the body cannot be described (spec_error_)
  const LoomFusedRegion* region_ = nullptr;      // spec_'s region, built once
  std::string spec_error_;
  std::mutex mutex_;
  std::map<std::pair<int, int>, fusion::Compiled> compiled_;
  std::map<std::string, std::shared_ptr<const Graph>> backward_graphs_;  // by input types and needs
};

// The body for a `_fused` node's text (parsed on first sight, cached).
std::shared_ptr<FusedBody> fused_body(std::string_view text);

// The `_fused` op: `_fused(Tensor[] inputs, str body) -> Tensor`.
const OpDef& fused_op();

}  // namespace loom::jit::internal
