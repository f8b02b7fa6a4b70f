// loom/jit/graph.h — the graph IR: a program as a list of catalog ops over
// SSA values.
//
//   graph(%x : float32[4, 64] @cpu, param %fc.weight : float32[10, 64] @cpu,
//         param %fc.bias : float32[10] @cpu):
//     %1 : float32[4, 10] @cpu = loom::linear(%x, %fc.weight, %fc.bias)
//     %2 : float32[4, 10] @cpu = loom::relu(%1)
//     return (%2)
//
// A Value is defined once: by the graph (an input, a parameter or a
// constant, whose tensors the graph holds by name) or by one node. A Node is
// one call of a catalog op: its tensor arguments as values (flattened: a
// Tensor[] argument contributes its elements), its other arguments as Attrs
// in schema order, and its results. An in-place node (add_) yields a new
// value for the tensor it wrote; later nodes use that value.
#pragma once

#include <loom/device.h>
#include <loom/dtype.h>
#include <loom/op_registry.h>
#include <loom/tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace loom::jit {

// A non-tensor argument of a node, owning its data (as_value's pointers
// point into it, so it must outlive the call they are passed to).
struct Attr {
  enum class Kind : uint8_t { None, Bool, Int, Float, IntList, FloatList, String, DType, Device, TensorList };
  Kind kind = Kind::None;
  int64_t i = 0;                // Bool, Int, DType (the dtype's code), TensorList (the count)
  double f = 0;                 // Float
  std::vector<int64_t> ints;    // IntList
  std::vector<double> floats;   // FloatList
  std::string s;                // String
  Device device;                // Device

  // From a call's LoomValue (copies what it points at). Throws for a kind a
  // graph cannot hold (a Generator object).
  static Attr from_value(const LoomValue& v, const std::string& op, const std::string& arg);
  LoomValue as_value() const;
  bool operator==(const Attr& o) const;
};

enum class InputKind : uint8_t {
  Input,      // passed to run() in order
  Parameter,  // a module's parameter or buffer, held by the graph by name
  Constant,   // any other tensor the traced program read, held by the graph
};

struct Node;

struct Value {
  std::string name;  // unique in the graph: "x", "fc.weight", "3"; printed as %name
  DType dtype = DType::Float32;
  std::vector<int64_t> sizes;  // sizes[0] == -1: a dynamic batch dimension, printed `?`
  Device device;
  Node* producer = nullptr;  // nullptr for graph inputs, parameters and constants
  InputKind kind = InputKind::Input;  // meaningful when producer is nullptr
  size_t index = 0;  // dense, in order of definition: the executor's slot
  // A number the program passed to an op (x * 2.5): a 0-d tensor that takes
  // part in type promotion only by its category, as PyTorch's wrapped
  // numbers do (int64 x * 2.5 is float32, not float64). Printed `wrapped`.
  bool wrapped_number = false;
};

struct Node {
  const OpDef* op = nullptr;
  std::vector<Value*> inputs;  // call.args order; nullptr for an absent Tensor?
  std::vector<Attr> attrs;     // call.values order (one per non-Tensor schema argument)
  std::vector<Value*> outputs;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  // Building. Names must be unique (add_input throws otherwise); a node's
  // outputs are named by number ("1", "2", ...) unless given.
  Value* add_input(std::string name, DType dtype, std::vector<int64_t> sizes, Device device,
                   InputKind kind = InputKind::Input);
  Node* add_node(const OpDef& op, std::vector<Value*> inputs, std::vector<Attr> attrs);
  Value* add_output_value(Node& node, DType dtype, std::vector<int64_t> sizes, Device device,
                          std::string name = "");
  void add_graph_output(Value* v) { outputs_.push_back(v); }
  // Moves node `n` to just before `before` (both of this graph).
  void move_before(const Node* n, const Node* before);
  // A constant input holding `t`, named c<k> (the first free k).
  Value* add_constant(const Tensor& t);

  // Rewriting (the passes): every use of `from` — node inputs and graph
  // outputs — becomes `to`.
  void replace_uses(const Value* from, Value* to);
  // Removes the nodes `dead` says, keeping the order of the rest; returns how
  // many went. Their results must be unused.
  size_t remove_nodes(const std::function<bool(const Node&)>& dead);
  // Drops constants (and their tensors) no node and no output uses.
  size_t remove_unused_constants();
  // How many node inputs and graph outputs use each value, by Value::index.
  std::vector<size_t> use_counts() const;

  const std::vector<Value*>& inputs() const { return inputs_; }  // every kind, in order
  const std::vector<Value*>& outputs() const { return outputs_; }
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  Value* find(const std::string& name) const;  // nullptr when absent
  size_t num_values() const { return values_.size(); }

  // The tensor a Parameter or Constant input holds (marked a wrapped number
  // where the value is one); throws naming the value when the graph has none.
  // Never writes the graph: runs of one graph may share it across threads.
  Tensor held(const Value& v) const;

  // The tensors of the Parameter and Constant inputs, by name.
  std::map<std::string, Tensor>& tensors() { return tensors_; }
  const std::map<std::string, Tensor>& tensors() const { return tensors_; }

  // The text form (see the top of this file); parse_graph reads it back.
  std::string str() const;
  // Checks every rule of the IR — known ops, arguments that fit the schema,
  // values defined before use and once, outputs defined — and throws
  // loom::Error naming the node and what is wrong. (Whether the graph holds
  // its parameters' tensors is checked when it runs.)
  void validate() const;

 private:
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_, outputs_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::map<std::string, Value*> by_name_;
  std::map<std::string, Tensor> tensors_;
  int next_id_ = 1;
};

// Reads the text form back. Throws loom::Error naming the line and column
// and what was expected; the result is validated. With `device`, every value
// and Device argument is placed there instead of where the text says (the
// text's devices need not exist on this machine).
Graph parse_graph(std::string_view text, std::optional<Device> device = std::nullopt);

// Whether two graphs have the same inputs, nodes, attributes, types and
// outputs (names included; the held tensors are not compared).
bool same_structure(const Graph& a, const Graph& b);

// One node's text, as str() prints it (for error messages).
std::string node_str(const Node& n);

}  // namespace loom::jit
