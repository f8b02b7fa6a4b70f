// graph.cpp — building, checking and comparing graphs (loom/jit/graph.h).
#include <loom/jit/graph.h>

#include <loom/error.h>
#include <loom/op_call.h>

#include <set>

namespace loom::jit {

using detail::cat;

// ---- Attr ---------------------------------------------------------------------------

Attr Attr::from_value(const LoomValue& v, const std::string& op, const std::string& arg) {
  Attr a;
  switch (v.kind) {
    case LOOM_VALUE_NONE: a.kind = Kind::None; break;
    case LOOM_VALUE_BOOL: a.kind = Kind::Bool, a.i = v.u.i != 0; break;
    case LOOM_VALUE_INT: a.kind = Kind::Int, a.i = v.u.i; break;
    case LOOM_VALUE_FLOAT: a.kind = Kind::Float, a.f = v.u.f; break;
    case LOOM_VALUE_INT_LIST:
      a.kind = Kind::IntList;
      a.ints.assign(v.u.ints.data, v.u.ints.data + v.u.ints.size);
      break;
    case LOOM_VALUE_FLOAT_LIST:
      a.kind = Kind::FloatList;
      a.floats.assign(v.u.floats.data, v.u.floats.data + v.u.floats.size);
      break;
    case LOOM_VALUE_STRING: a.kind = Kind::String, a.s.assign(v.u.str.data, static_cast<size_t>(v.u.str.size)); break;
    case LOOM_VALUE_DTYPE: a.kind = Kind::DType, a.i = v.u.i; break;
    case LOOM_VALUE_DEVICE:
      a.kind = Kind::Device;
      a.device = Device(static_cast<int16_t>(v.u.device.type), static_cast<int16_t>(v.u.device.index));
      break;
    case LOOM_VALUE_TENSOR_LIST: a.kind = Kind::TensorList, a.i = v.u.i; break;
    case detail::kValueGenerator:
      throw Error(ErrorKind::Unsupported,
                  cat(op, ": argument '", arg, "' is a Generator object, which a graph cannot hold; trace with "
                      "generator=None (the device's default generator) instead"));
    default: throw Error(ErrorKind::Internal, cat(op, ": argument '", arg, "' has unknown value kind ", v.kind));
  }
  return a;
}

LoomValue Attr::as_value() const {
  LoomValue v{};
  switch (kind) {
    case Kind::None: v.kind = LOOM_VALUE_NONE; break;
    case Kind::Bool: v.kind = LOOM_VALUE_BOOL, v.u.i = i; break;
    case Kind::Int: v.kind = LOOM_VALUE_INT, v.u.i = i; break;
    case Kind::Float: v.kind = LOOM_VALUE_FLOAT, v.u.f = f; break;
    case Kind::IntList:
      v.kind = LOOM_VALUE_INT_LIST, v.u.ints.data = ints.data(), v.u.ints.size = static_cast<int64_t>(ints.size());
      break;
    case Kind::FloatList:
      v.kind = LOOM_VALUE_FLOAT_LIST, v.u.floats.data = floats.data();
      v.u.floats.size = static_cast<int64_t>(floats.size());
      break;
    case Kind::String: v.kind = LOOM_VALUE_STRING, v.u.str.data = s.data(), v.u.str.size = static_cast<int64_t>(s.size()); break;
    case Kind::DType: v.kind = LOOM_VALUE_DTYPE, v.u.i = i; break;
    case Kind::Device: v.kind = LOOM_VALUE_DEVICE, v.u.device = device.abi(); break;
    case Kind::TensorList: v.kind = LOOM_VALUE_TENSOR_LIST, v.u.i = i; break;
  }
  return v;
}

bool Attr::operator==(const Attr& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::None: return true;
    case Kind::Float: return f == o.f || (f != f && o.f != o.f);  // NaN equals NaN here
    case Kind::IntList: return ints == o.ints;
    case Kind::FloatList: return floats == o.floats;
    case Kind::String: return s == o.s;
    case Kind::Device: return device == o.device;
    default: return i == o.i;
  }
}

// ---- Graph --------------------------------------------------------------------------

Value* Graph::add_input(std::string name, DType dtype, std::vector<int64_t> sizes, Device device, InputKind kind) {
  LOOM_CHECK(!name.empty() && !by_name_.count(name), "graph: input name '", name, "' is empty or already used");
  auto v = std::make_unique<Value>();
  v->name = std::move(name), v->dtype = dtype, v->sizes = std::move(sizes), v->device = device, v->kind = kind;
  v->index = values_.size();
  Value* p = v.get();
  by_name_[p->name] = p;
  values_.push_back(std::move(v));
  inputs_.push_back(p);
  return p;
}

Node* Graph::add_node(const OpDef& op, std::vector<Value*> inputs, std::vector<Attr> attrs) {
  auto n = std::make_unique<Node>();
  n->op = &op, n->inputs = std::move(inputs), n->attrs = std::move(attrs);
  nodes_.push_back(std::move(n));
  return nodes_.back().get();
}

Value* Graph::add_output_value(Node& node, DType dtype, std::vector<int64_t> sizes, Device device, std::string name) {
  if (name.empty()) {
    do name = std::to_string(next_id_++);
    while (by_name_.count(name));
  }
  LOOM_CHECK(!by_name_.count(name), "graph: value name '", name, "' is already used");
  auto v = std::make_unique<Value>();
  v->name = std::move(name), v->dtype = dtype, v->sizes = std::move(sizes), v->device = device, v->producer = &node;
  v->index = values_.size();
  Value* p = v.get();
  by_name_[p->name] = p;
  values_.push_back(std::move(v));
  node.outputs.push_back(p);
  return p;
}

Tensor Graph::held(const Value& v) const {
  auto it = tensors_.find(v.name);
  LOOM_CHECK(it != tensors_.end(), "jit::run: the graph holds no tensor for its ",
             v.kind == InputKind::Parameter ? "parameter" : "constant", " %", v.name);
  const Tensor& t = it->second;
  if (v.wrapped_number == t.impl()->is_wrapped_number()) return t;
  // A tensor stored without the value's flag (one put in tensors() by hand):
  // an alias carries it, so concurrent runs of one graph never write the
  // shared tensor. The tracer and the loader store it flagged already.
  Tensor alias = t.detach();
  alias.impl()->set_wrapped_number(v.wrapped_number);
  return alias;
}

void Graph::move_before(const Node* n, const Node* before) {
  auto at = [&](const Node* x) {
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].get() == x) return i;
    throw Error(ErrorKind::InvalidArgument, "graph: move_before got a node of another graph");
  };
  const size_t from = at(n);
  std::unique_ptr<Node> moved = std::move(nodes_[from]);
  nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(from));
  nodes_.insert(nodes_.begin() + static_cast<std::ptrdiff_t>(at(before)), std::move(moved));
}

Value* Graph::add_constant(const Tensor& t) {
  std::string name;
  for (int k = 0;; ++k) {
    name = std::string("c").append(std::to_string(k));
    if (!by_name_.count(name)) break;
  }
  Value* v = add_input(name, t.dtype(), std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), t.device(),
                       InputKind::Constant);
  tensors_[name] = t;
  return v;
}

void Graph::replace_uses(const Value* from, Value* to) {
  for (auto& n : nodes_)
    for (Value*& in : n->inputs)
      if (in == from) in = to;
  for (Value*& out : outputs_)
    if (out == from) out = to;
}

size_t Graph::remove_nodes(const std::function<bool(const Node&)>& dead) {
  const size_t before = nodes_.size();
  std::vector<std::unique_ptr<Node>> kept;
  kept.reserve(before);
  for (auto& n : nodes_) {
    if (!dead(*n)) {
      kept.push_back(std::move(n));
      continue;
    }
    for (Value* out : n->outputs) {
      out->producer = nullptr;  // orphaned: unnamed by the graph from now on
      by_name_.erase(out->name);
    }
  }
  nodes_ = std::move(kept);
  return before - nodes_.size();
}

size_t Graph::remove_unused_constants() {
  const std::vector<size_t> uses = use_counts();
  size_t removed = 0;
  std::vector<Value*> kept;
  for (Value* v : inputs_) {
    if (v->kind == InputKind::Constant && uses[v->index] == 0) {
      tensors_.erase(v->name);
      by_name_.erase(v->name);
      ++removed;
      continue;
    }
    kept.push_back(v);
  }
  inputs_ = std::move(kept);
  return removed;
}

std::vector<size_t> Graph::use_counts() const {
  std::vector<size_t> uses(values_.size(), 0);
  for (const auto& n : nodes_)
    for (const Value* in : n->inputs)
      if (in) ++uses[in->index];
  for (const Value* out : outputs_) ++uses[out->index];
  return uses;
}

Value* Graph::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

namespace {

// Whether an attribute of `kind` may stand for a schema argument of `arg`.
bool attr_fits(const Attr& a, const Argument& arg) {
  using K = Attr::Kind;
  if (a.kind == K::None) return arg.optional || arg.type == ArgType::Generator;
  switch (arg.type) {
    case ArgType::TensorList: return a.kind == K::TensorList;
    case ArgType::Scalar: return a.kind == K::Bool || a.kind == K::Int || a.kind == K::Float;
    case ArgType::Int: return a.kind == K::Int;
    case ArgType::IntList: return a.kind == K::IntList || a.kind == K::Int;
    case ArgType::Float: return a.kind == K::Float || a.kind == K::Int;
    case ArgType::FloatList: return a.kind == K::FloatList;
    case ArgType::Bool: return a.kind == K::Bool;
    case ArgType::Str: return a.kind == K::String;
    case ArgType::ScalarType: return a.kind == K::DType;
    case ArgType::Device: return a.kind == K::Device;
    case ArgType::Generator: return false;
    case ArgType::Tensor: return false;
  }
  return false;
}

}  // namespace

void Graph::validate() const {
  std::set<const Value*> defined;
  for (const Value* v : inputs_) {
    LOOM_CHECK(!v->producer, "graph: input %", v->name, " has a producing node");
    defined.insert(v);
  }
  size_t index = 0;
  for (const auto& np : nodes_) {
    const Node& n = *np;
    auto fail = [&](const std::string& what) {
      throw Error(cat("graph: node ", index, " (", node_str(n), "): ", what));
    };
    if (!n.op) fail("no op");
    const Schema& s = n.op->schema();
    // Tensor inputs: one per Tensor/Tensor? argument, `count` per Tensor[].
    size_t want_inputs = 0, attr_index = 0;
    for (const Argument& a : s.args) {
      if (a.type == ArgType::Tensor) {
        ++want_inputs;
        continue;
      }
      if (attr_index >= n.attrs.size()) fail(cat("missing the argument '", a.name, "' (schema: ", s.text, ")"));
      const Attr& attr = n.attrs[attr_index++];
      if (!attr_fits(attr, a)) fail(cat("argument '", a.name, "' does not fit its schema type ", arg_type_name(a.type),
                                        a.optional ? "?" : ""));
      if (a.type == ArgType::TensorList) {
        if (attr.i < 0) fail(cat("argument '", a.name, "' has a negative tensor count"));
        want_inputs += static_cast<size_t>(attr.i);
      }
    }
    if (attr_index != n.attrs.size())
      fail(cat(n.attrs.size(), " non-tensor arguments, the schema has ", attr_index, " (", s.text, ")"));
    if (n.inputs.size() != want_inputs)
      fail(cat(n.inputs.size(), " tensor inputs, the schema takes ", want_inputs, " (", s.text, ")"));
    // Required tensor arguments (and every list element) must be present.
    size_t ti = 0, ai = 0;
    for (const Argument& a : s.args) {
      if (a.type == ArgType::Tensor) {
        if (!n.inputs[ti] && !a.optional) fail(cat("the tensor argument '", a.name, "' is absent"));
        ++ti;
        continue;
      }
      const Attr& attr = n.attrs[ai++];
      if (a.type != ArgType::TensorList) continue;
      for (int64_t k = 0; k < attr.i; ++k, ++ti)
        if (!n.inputs[ti]) fail(cat("element ", k, " of the tensor list '", a.name, "' is absent"));
    }
    for (const Value* in : n.inputs)
      if (in && !defined.count(in)) fail(cat("%", in->name, " is used before it is defined"));
    if (n.outputs.size() != s.returns.size())
      fail(cat(n.outputs.size(), " results, the schema returns ", s.returns.size()));
    for (const Value* out : n.outputs) {
      if (out->producer != &n) fail(cat("%", out->name, " is not produced by this node"));
      if (!defined.insert(out).second) fail(cat("%", out->name, " is defined twice"));
    }
    ++index;
  }
  LOOM_CHECK(!outputs_.empty(), "graph: no outputs");
  for (const Value* v : outputs_) LOOM_CHECK(defined.count(v), "graph: output %", v->name, " is never defined");
}

namespace {
bool same_value(const Value* a, const Value* b) {
  if (!a || !b) return a == b;
  return a->name == b->name && a->dtype == b->dtype && a->sizes == b->sizes && a->device == b->device &&
         a->wrapped_number == b->wrapped_number && (a->producer == nullptr) == (b->producer == nullptr) &&
         (a->producer || a->kind == b->kind);
}
}  // namespace

bool same_structure(const Graph& a, const Graph& b) {
  if (a.inputs().size() != b.inputs().size() || a.nodes().size() != b.nodes().size() ||
      a.outputs().size() != b.outputs().size())
    return false;
  for (size_t i = 0; i < a.inputs().size(); ++i)
    if (!same_value(a.inputs()[i], b.inputs()[i])) return false;
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node &x = *a.nodes()[i], &y = *b.nodes()[i];
    if (x.op != y.op || x.inputs.size() != y.inputs.size() || x.outputs.size() != y.outputs.size() ||
        !(x.attrs == y.attrs))
      return false;
    for (size_t k = 0; k < x.inputs.size(); ++k)
      if (!same_value(x.inputs[k], y.inputs[k])) return false;
    for (size_t k = 0; k < x.outputs.size(); ++k)
      if (!same_value(x.outputs[k], y.outputs[k])) return false;
  }
  for (size_t i = 0; i < a.outputs().size(); ++i)
    if (!same_value(a.outputs()[i], b.outputs()[i])) return false;
  return true;
}

}  // namespace loom::jit
