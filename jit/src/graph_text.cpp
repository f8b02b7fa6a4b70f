// graph_text.cpp — a graph's text form (loom/jit/graph.h); graph_parse.cpp
// reads it back.
#include <loom/jit/graph.h>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace loom::jit {
namespace {

const char* kind_word(InputKind k) {
  switch (k) {
    case InputKind::Parameter: return "param ";
    case InputKind::Constant: return "const ";
    default: return "";
  }
}

std::string type_str(const Value& v) {
  std::string s = std::string(name(v.dtype)) + "[";
  for (size_t i = 0; i < v.sizes.size(); ++i)
    s.append(i ? ", " : "").append(v.sizes[i] < 0 ? std::string("?") : std::to_string(v.sizes[i]));
  return s + "] @" + v.device.str();
}

// Always recognisable as a float (a '.', an exponent, inf or nan), and read
// back to the same double.
std::string float_str(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", f);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

std::string attr_str(const Attr& a) {
  using K = Attr::Kind;
  switch (a.kind) {
    case K::None: return "None";
    case K::Bool: return a.i ? "True" : "False";
    case K::Int: return std::to_string(a.i);
    case K::Float: return float_str(a.f);
    case K::IntList: {
      std::string s = "[";
      for (size_t i = 0; i < a.ints.size(); ++i) s.append(i ? ", " : "").append(std::to_string(a.ints[i]));
      return s + "]";
    }
    case K::FloatList: {
      std::string s = "[";
      for (size_t i = 0; i < a.floats.size(); ++i) s += (i ? ", " : "") + float_str(a.floats[i]);
      return s + "]";
    }
    case K::String: return quoted(a.s);
    case K::DType: return std::string(name(static_cast<DType>(a.i)));
    case K::Device: return quoted(a.device.str());
    case K::TensorList: return std::string("[").append(std::to_string(a.i)).append(" tensors]");
  }
  return "?";
}

}  // namespace

std::string node_str(const Node& n) {
  std::string s;
  for (size_t i = 0; i < n.outputs.size(); ++i)
    s += (i ? ", %" : "%") + n.outputs[i]->name + " : " + type_str(*n.outputs[i]);
  if (!n.outputs.empty()) s += " = ";
  if (!n.op) return s + "<no op>";
  const Schema& schema = n.op->schema();
  s += "loom::" + n.op->name() + "(";
  std::string tensors, others;
  size_t ti = 0, ai = 0;
  auto value_name = [&](size_t i) {
    return i < n.inputs.size() ? (n.inputs[i] ? "%" + n.inputs[i]->name : std::string("None")) : std::string("?");
  };
  for (const Argument& a : schema.args) {
    if (a.type == ArgType::Tensor) {
      tensors += (tensors.empty() ? "" : ", ") + value_name(ti++);
      continue;
    }
    if (ai >= n.attrs.size()) break;
    const Attr& attr = n.attrs[ai++];
    if (a.type == ArgType::TensorList) {
      std::string list = "[";
      for (int64_t k = 0; k < attr.i; ++k) list += (k ? ", " : "") + value_name(ti++);
      tensors += (tensors.empty() ? "" : ", ") + list + "]";
      continue;
    }
    others += (others.empty() ? "" : ", ") + a.name + "=" + attr_str(attr);
  }
  s += tensors + (!tensors.empty() && !others.empty() ? ", " : "") + others + ")";
  return s;
}

std::string Graph::str() const {
  std::ostringstream os;
  os << "graph(";
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Value& v = *inputs_[i];
    os << (i ? ",\n      " : "") << kind_word(v.kind) << (v.wrapped_number ? "wrapped " : "") << "%" << v.name << " : "
       << type_str(v);
  }
  os << "):\n";
  for (const auto& n : nodes_) os << "  " << node_str(*n) << "\n";
  os << "  return (";
  for (size_t i = 0; i < outputs_.size(); ++i) os << (i ? ", %" : "%") << outputs_[i]->name;
  os << ")\n";
  return os.str();
}

}  // namespace loom::jit
