// engine.cpp — runs a backward pass over the graph.
//
// 1. Count, for every node reachable from the roots, how many edges lead
//    into it. 2. Run nodes whose count reached zero, latest-created first,
//    summing the gradients that arrive at each node's inputs. For grad(),
//    the inputs' gradients are captured where they arrive, and only nodes on
//    a path to an input run (never AccumulateGrad: .grad stays untouched).
// Grad mode during the pass is create_graph, so with it the formulas'
// own ops record a graph of the gradient (double backward).
#include "nodes.h"

#include <loom/autocast.h>
#include <loom/ops.h>

#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace loom::autograd {
namespace {

struct Capture {
  uint32_t input_nr;
  size_t index;
};

struct NodeState {
  int dependencies = 0;
  std::vector<Tensor> buffer;       // gradients arriving at the node's inputs
  std::vector<Capture> captures;    // grad(): inputs whose gradient lands here
  bool run = true;                  // grad(): on a path to a captured input
};

struct ByLatest {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

class GraphTask {
 public:
  GraphTask(bool keep_graph, bool capture_mode) : keep_graph_(keep_graph), capture_mode_(capture_mode) {}

  void add_root(const Edge& e, Tensor grad) {
    roots_.push_back(e.fn.get());
    accumulate(state(e.fn.get()), e.input_nr, std::move(grad), *e.fn);
  }
  void add_capture(const Edge& e, size_t index) { state(e.fn.get()).captures.push_back({e.input_nr, index}); }
  std::vector<Tensor>& captured() { return captured_; }

  void execute() {
    count_dependencies();
    if (capture_mode_) mark_needed();
    std::priority_queue<Node*, std::vector<Node*>, ByLatest> ready;
    std::unordered_set<Node*> queued;
    for (Node* r : roots_)
      if (state(r).dependencies == 0 && queued.insert(r).second) ready.push(r);
    while (!ready.empty()) {
      Node* n = ready.top();
      ready.pop();
      NodeState& st = state(n);
      std::vector<Tensor> grads = std::move(st.buffer);
      grads.resize(n->num_inputs());
      if (!st.captures.empty() || st.run) n->run_pre_hooks(grads);
      for (const Capture& c : st.captures) captured_[c.index] = grads[c.input_nr];
      std::vector<Tensor> outs;
      if (st.run) {
        outs = n->apply(std::move(grads));
        if (!keep_graph_) n->release_variables();
      }
      const auto& edges = n->next_edges();
      LOOM_CHECK(!st.run || outs.empty() || outs.size() == edges.size(), "autograd: ", n->name(),
                 " returned ", outs.size(), " gradients for ", edges.size(), " inputs");
      for (size_t i = 0; i < edges.size(); ++i) {
        const Edge& e = edges[i];
        if (!e.valid()) continue;
        NodeState& child = state(e.fn.get());
        if (i < outs.size() && outs[i].defined()) accumulate(child, e.input_nr, std::move(outs[i]), *e.fn);
        if (--child.dependencies == 0 && queued.insert(e.fn.get()).second) ready.push(e.fn.get());
      }
    }
  }

 private:
  NodeState& state(Node* n) { return states_[n]; }

  static void accumulate(NodeState& st, uint32_t input_nr, Tensor grad, const Node& target) {
    if (st.buffer.size() <= input_nr) st.buffer.resize(std::max<size_t>(input_nr + 1, target.num_inputs()));
    Tensor& slot = st.buffer[input_nr];
    slot = slot.defined() ? slot + grad : std::move(grad);
  }

  void count_dependencies() {
    // Two roots may be outputs of one node (grad() of both results of a
    // two-output op): walk it once, or its edges count twice and the
    // nodes below never become ready.
    std::vector<Node*> stack;
    std::unordered_set<Node*> seen;
    for (Node* r : roots_)
      if (seen.insert(r).second) stack.push_back(r);
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges()) {
        if (!e.valid()) continue;
        Node* c = e.fn.get();
        ++state(c).dependencies;
        if (seen.insert(c).second) stack.push_back(c);
      }
      order_.push_back(n);
    }
  }

  // grad(): a node runs only when some captured input lies below it. Nodes
  // are visited children-first by repeated passes over a topological order.
  void mark_needed() {
    // Topological order (parents first) by Kahn's algorithm on a copy of
    // the dependency counts.
    std::unordered_map<Node*, int> deps;
    for (Node* n : order_) deps[n] = state(n).dependencies;
    std::vector<Node*> topo;
    for (Node* r : roots_)
      if (deps[r] == 0 && std::find(topo.begin(), topo.end(), r) == topo.end()) topo.push_back(r);
    for (size_t i = 0; i < topo.size(); ++i)
      for (const Edge& e : topo[i]->next_edges())
        if (e.valid() && --deps[e.fn.get()] == 0) topo.push_back(e.fn.get());
    std::unordered_map<Node*, bool> needed;  // has a capture at or below it
    for (size_t i = topo.size(); i-- > 0;) {
      Node* n = topo[i];
      bool below = false;
      for (const Edge& e : n->next_edges())
        if (e.valid() && needed[e.fn.get()]) below = true;
      NodeState& st = state(n);
      st.run = below;
      needed[n] = below || !st.captures.empty();
    }
  }

  bool keep_graph_;
  bool capture_mode_;
  std::vector<Node*> roots_;
  std::vector<Node*> order_;
  std::unordered_map<Node*, NodeState> states_;
  std::vector<Tensor> captured_;
};

// The gradient each root starts with.
Tensor root_grad(const Tensor& out, const std::vector<Tensor>& grad_outputs, size_t i) {
  if (i < grad_outputs.size() && grad_outputs[i].defined()) {
    const Tensor& g = grad_outputs[i];
    LOOM_CHECK(g.sizes() == out.sizes(), "backward: grad_outputs[", i, "] has shape ",
               shape_str(g.sizes()), " but output ", i, " has shape ", shape_str(out.sizes()));
    LOOM_CHECK(g.device() == out.device(), "backward: grad_outputs[", i, "] is on ",
               g.device().str(), " but output ", i, " is on ", out.device().str());
    return g;
  }
  LOOM_CHECK(out.numel() == 1, "grad can be implicitly created only for scalar outputs: output ", i,
             " has shape ", shape_str(out.sizes()), "; pass a gradient of that shape");
  return loom::ones_like(out);
}

Edge root_edge(const Tensor& out, size_t i) {
  LOOM_CHECK(out.defined(), "backward: output ", i, " is an undefined tensor");
  Edge e = detail::gradient_edge(out);
  LOOM_CHECK(e.valid(), "element ", i,
             " of tensors does not require grad and does not have a grad_fn (was it computed "
             "under NoGradGuard, or from tensors none of which require grad?)");
  return e;
}

// The callbacks queued (queue_callback) during the backward pass running on
// this thread; null when none runs. Nested passes (a hook calling grad())
// have lists of their own.
thread_local std::vector<std::function<void()>>* t_final_callbacks = nullptr;

// Runs the pass with grad mode = create_graph (so formulas record a graph
// of the gradient exactly when asked), restoring the caller's mode after;
// then the callbacks the pass queued, in order (one may queue more).
void run(GraphTask& task, bool create_graph) {
  std::vector<std::function<void()>> callbacks;
  struct Restore {
    bool prev = GradMode::is_enabled();
    std::vector<std::function<void()>>* prev_callbacks = t_final_callbacks;
    ~Restore() {
      GradMode::set_enabled(prev);
      t_final_callbacks = prev_callbacks;
    }
  } restore;
  t_final_callbacks = &callbacks;
  {
    // Gradients keep the dtypes the forward gave them, whatever autocast
    // region backward() is called in.
    autocast::SuspendGuard no_autocast;
    GradMode::set_enabled(create_graph);
    task.execute();
  }
  GradMode::set_enabled(restore.prev);
  for (size_t i = 0; i < callbacks.size(); ++i) {
    std::function<void()> fn = std::move(callbacks[i]);
    fn();
  }
}

}  // namespace

void queue_callback(std::function<void()> fn) {
  LOOM_CHECK(t_final_callbacks != nullptr,
             "queue_callback: no backward pass is running on this thread (call it from a hook during backward)");
  t_final_callbacks->push_back(std::move(fn));
}

void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
              std::optional<bool> retain_graph, bool create_graph) {
  LOOM_CHECK(!outputs.empty(), "backward: no outputs given");
  GraphTask task(retain_graph.value_or(create_graph), /*capture_mode=*/false);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Edge e = root_edge(outputs[i], i);
    task.add_root(e, root_grad(outputs[i], grad_outputs, i));
  }
  run(task, create_graph);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused) {
  LOOM_CHECK(!outputs.empty(), "grad: no outputs given");
  LOOM_CHECK(!inputs.empty(), "grad: no inputs given");
  GraphTask task(retain_graph.value_or(create_graph), /*capture_mode=*/true);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Edge e = root_edge(outputs[i], i);
    task.add_root(e, root_grad(outputs[i], grad_outputs, i));
  }
  task.captured().resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    LOOM_CHECK(inputs[i].defined() && inputs[i].requires_grad(), "grad: input ", i,
               " does not require grad");
    task.add_capture(detail::gradient_edge(inputs[i]), i);
  }
  run(task, create_graph);
  std::vector<Tensor> result = std::move(task.captured());
  for (size_t i = 0; i < result.size(); ++i) {
    LOOM_CHECK(allow_unused || result[i].defined(), "grad: input ", i,
               " appears not to have been used in the graph; pass allow_unused=true if this is "
               "what you want");
    if (result[i].defined() && !(result[i].sizes() == inputs[i].sizes()))
      result[i] = sum_to(result[i], inputs[i].sizes());
  }
  return result;
}

}  // namespace loom::autograd
