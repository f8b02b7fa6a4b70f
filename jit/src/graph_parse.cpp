// graph_parse.cpp — the text form back into a Graph (loom/jit/graph.h).
// A small recursive-descent reader: every error names the line and column
// and what it expected there.
#include <loom/jit/graph.h>

#include <loom/error.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace loom::jit {
namespace {

using detail::cat;

class Reader {
 public:
  Reader(std::string_view text, std::optional<Device> device) : t_(text), device_(device) {}

  // A device as written, or the override.
  Device device_of(const std::string& spec) {
    if (device_) return *device_;
    try {
      return Device(spec);
    } catch (const std::exception& e) {
      fail(cat("device '", spec, "': ", e.what()));
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < t_.size(); ++i) {
      if (t_[i] == '\n') ++line, col = 1;
      else ++col;
    }
    throw Error(cat("parse_graph: line ", line, ", column ", col, ": ", what));
  }

  void skip_space() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= t_.size();
  }
  bool peek(std::string_view s) {
    skip_space();
    return t_.substr(pos_, s.size()) == s;
  }
  bool accept(std::string_view s) {
    if (!peek(s)) return false;
    pos_ += s.size();
    return true;
  }
  void expect(std::string_view s) {
    if (!accept(s)) fail(cat("expected '", s, "'"));
  }

  static bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

  // Letters, digits, '_' and '.'.
  std::string word(const char* what) {
    skip_space();
    const size_t start = pos_;
    while (pos_ < t_.size() && name_char(t_[pos_])) ++pos_;
    if (pos_ == start) fail(cat("expected ", what));
    return std::string(t_.substr(start, pos_ - start));
  }

  std::string value_name() {
    expect("%");
    return word("a value name after '%'");
  }

  int64_t integer() {
    skip_space();
    const char* begin = t_.data() + pos_;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(begin, &end, 10);
    if (end == begin || errno) fail("expected an integer");
    pos_ += static_cast<size_t>(end - begin);
    return v;
  }

  // A number literal: an Int unless it has '.', an exponent, or is inf/nan.
  Attr number() {
    skip_space();
    Attr a;
    for (const char* special : {"nan", "inf", "-inf"}) {
      if (accept(special)) {
        a.kind = Attr::Kind::Float;
        a.f = std::string(special) == "nan" ? NAN : (special[0] == '-' ? -INFINITY : INFINITY);
        return a;
      }
    }
    size_t end = pos_;
    while (end < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[end])) || t_[end] == '.' ||
                               t_[end] == '-' || t_[end] == '+'))
      ++end;
    const std::string text(t_.substr(pos_, end - pos_));
    const bool is_float = text.find_first_of(".eE") != std::string::npos;
    char* stop = nullptr;
    errno = 0;
    if (is_float) {
      a.kind = Attr::Kind::Float;
      a.f = std::strtod(text.c_str(), &stop);
    } else {
      a.kind = Attr::Kind::Int;
      a.i = std::strtoll(text.c_str(), &stop, 10);
    }
    if (text.empty() || *stop != '\0' || errno) fail(cat("expected a number, got '", text, "'"));
    pos_ = end;
    return a;
  }

  std::string string_literal() {
    expect("\"");
    std::string s;
    while (pos_ < t_.size() && t_[pos_] != '"') {
      char c = t_[pos_++];
      if (c == '\\' && pos_ < t_.size()) {
        const char e = t_[pos_++];
        c = e == 'n' ? '\n' : e;
      }
      s += c;
    }
    if (pos_ >= t_.size()) fail("unterminated string");
    ++pos_;
    return s;
  }

  // float32[4, 64] @cpu:0
  void type(DType& dtype, std::vector<int64_t>& sizes, Device& device) {
    const std::string d = word("a dtype");
    try {
      dtype = dtype_from_name(d);
    } catch (const std::exception&) {
      fail(cat("unknown dtype '", d, "'"));
    }
    expect("[");
    sizes.clear();
    if (!accept("]")) {
      do {
        if (accept("?")) {  // the dynamic batch dimension
          if (!sizes.empty()) fail("only the first dimension may be '?'");
          sizes.push_back(-1);
          continue;
        }
        const int64_t n = integer();
        if (n < 0) fail("a negative size");
        sizes.push_back(n);
      } while (accept(","));
      expect("]");
    }
    expect("@");
    std::string spec = word("a device");
    if (accept(":")) spec.append(":").append(std::to_string(integer()));
    device = device_of(spec);
  }

  // One non-tensor argument of schema type `a`.
  Attr attr(const Argument& a) {
    Attr out;
    if (accept("None")) return out;
    switch (a.type) {
      case ArgType::Bool:
      case ArgType::Scalar:
        if (accept("True")) return out.kind = Attr::Kind::Bool, out.i = 1, out;
        if (accept("False")) return out.kind = Attr::Kind::Bool, out.i = 0, out;
        if (a.type == ArgType::Bool) fail(cat("expected True or False for '", a.name, "'"));
        return number();
      case ArgType::Int: {
        Attr n = number();
        if (n.kind != Attr::Kind::Int) fail(cat("expected an integer for '", a.name, "'"));
        return n;
      }
      case ArgType::Float: {
        Attr n = number();
        return n;
      }
      case ArgType::IntList:
      case ArgType::FloatList: {
        if (!peek("[")) {  // a single int for an int list, as the frontends pass it
          Attr n = number();
          if (n.kind != Attr::Kind::Int || a.type != ArgType::IntList) fail(cat("expected a list for '", a.name, "'"));
          return n;
        }
        expect("[");
        out.kind = a.type == ArgType::IntList ? Attr::Kind::IntList : Attr::Kind::FloatList;
        if (!accept("]")) {
          do {
            Attr n = number();
            if (out.kind == Attr::Kind::IntList) {
              if (n.kind != Attr::Kind::Int) fail(cat("expected integers in '", a.name, "'"));
              out.ints.push_back(n.i);
            } else {
              out.floats.push_back(n.kind == Attr::Kind::Int ? static_cast<double>(n.i) : n.f);
            }
          } while (accept(","));
          expect("]");
        }
        return out;
      }
      case ArgType::Str: return out.kind = Attr::Kind::String, out.s = string_literal(), out;
      case ArgType::ScalarType: {
        const std::string d = word("a dtype");
        try {
          out.kind = Attr::Kind::DType, out.i = static_cast<int64_t>(dtype_from_name(d));
        } catch (const std::exception&) {
          fail(cat("unknown dtype '", d, "'"));
        }
        return out;
      }
      case ArgType::Device: {
        const std::string spec = string_literal();
        out.kind = Attr::Kind::Device, out.device = device_of(spec);
        return out;
      }
      default: fail(cat("argument '", a.name, "' of type ", arg_type_name(a.type), " cannot be written in a graph"));
    }
  }

  size_t pos_ = 0;

 private:
  std::string_view t_;
  std::optional<Device> device_;
};

Value* lookup(Reader& r, Graph& g, const std::string& name) {
  Value* v = g.find(name);
  if (!v) r.fail(cat("%", name, " is not defined before this use"));
  return v;
}

}  // namespace

Graph parse_graph(std::string_view text, std::optional<Device> device) {
  Reader r(text, device);
  Graph g;
  r.expect("graph");
  r.expect("(");
  if (!r.accept(")")) {
    do {
      InputKind kind = InputKind::Input;
      if (r.accept("param ")) kind = InputKind::Parameter;
      else if (r.accept("const ")) kind = InputKind::Constant;
      const bool wrapped = r.accept("wrapped ");
      const std::string name = r.value_name();
      r.expect(":");
      DType dtype;
      std::vector<int64_t> sizes;
      Device device;
      r.type(dtype, sizes, device);
      if (g.find(name)) r.fail(cat("%", name, " is defined twice"));
      Value* v = g.add_input(name, dtype, sizes, device, kind);
      v->wrapped_number = wrapped;
      if (wrapped && !sizes.empty()) r.fail(cat("%", name, " is marked wrapped (a number) but is not 0-d"));
    } while (r.accept(","));
    r.expect(")");
  }
  r.expect(":");
  for (;;) {
    if (r.accept("return")) {
      r.expect("(");
      if (!r.accept(")")) {
        do g.add_graph_output(lookup(r, g, r.value_name()));
        while (r.accept(","));
        r.expect(")");
      }
      break;
    }
    // %a : T, %b : T = loom::op(...), or loom::op(...) without results.
    struct Out {
      std::string name;
      DType dtype;
      std::vector<int64_t> sizes;
      Device device;
    };
    std::vector<Out> outs;
    if (r.peek("%")) {
      do {
        Out o;
        o.name = r.value_name();
        r.expect(":");
        r.type(o.dtype, o.sizes, o.device);
        outs.push_back(std::move(o));
      } while (r.accept(","));
      r.expect("=");
    }
    r.expect("loom::");
    const std::string op_name = r.word("an op name");
    const OpDef* op = Dispatcher::instance().find(op_name);
    if (!op) {
      try {
        Dispatcher::instance().op(op_name);  // throws with a suggestion
      } catch (const std::exception& e) {
        r.fail(e.what());
      }
    }
    const Schema& s = op->schema();
    r.expect("(");
    // Tensor arguments first, in schema order; then name=value pairs.
    std::vector<Value*> inputs;
    std::vector<int64_t> list_counts;  // per Tensor[] argument
    bool first = true;
    for (const Argument& a : s.args) {
      if (a.type != ArgType::Tensor && a.type != ArgType::TensorList) continue;
      if (!first) r.expect(",");
      first = false;
      if (a.type == ArgType::TensorList) {
        r.expect("[");
        int64_t count = 0;
        if (!r.accept("]")) {
          do inputs.push_back(lookup(r, g, r.value_name())), ++count;
          while (r.accept(","));
          r.expect("]");
        }
        list_counts.push_back(count);
      } else if (r.accept("None")) {
        inputs.push_back(nullptr);
      } else {
        inputs.push_back(lookup(r, g, r.value_name()));
      }
    }
    std::vector<Attr> attrs;
    size_t list_index = 0;
    for (const Argument& a : s.args) {
      if (a.type == ArgType::Tensor) continue;
      if (a.type == ArgType::TensorList) {
        Attr count;
        count.kind = Attr::Kind::TensorList, count.i = list_counts[list_index++];
        attrs.push_back(count);
        continue;
      }
      if (!first) r.expect(",");
      first = false;
      const std::string arg = r.word("an argument name");
      if (arg != a.name) r.fail(cat("expected the argument '", a.name, "' of ", s.text, ", got '", arg, "'"));
      r.expect("=");
      attrs.push_back(r.attr(a));
    }
    r.expect(")");
    Node* n = g.add_node(*op, std::move(inputs), std::move(attrs));
    for (auto& o : outs) {
      if (g.find(o.name)) r.fail(cat("%", o.name, " is defined twice"));
      g.add_output_value(*n, o.dtype, std::move(o.sizes), o.device, o.name);
    }
  }
  if (!r.at_end()) r.fail("text after the return line");
  g.validate();
  return g;
}

}  // namespace loom::jit
