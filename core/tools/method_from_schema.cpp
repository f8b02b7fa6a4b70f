// method_from_schema.cpp — see method_from_schema.h.
//
// The definitions it writes use detail::run_op and the LoomValue helpers of
// core/src/ops/core_op.h, as the hand-written op functions do, plus the few
// helpers the generated file defines first (find_op, int_value,
// string_value, device_value): core_op.h's, named in gen_tensor_methods.cpp's preamble.
#include "method_from_schema.h"

#include <set>

namespace loom::tools {
namespace {

// What one non-self argument becomes.
struct Mapped {
  std::string type;    // C++ parameter type
  std::string tensor;  // for tensor arguments: the `const Tensor*` expression
  std::string value;   // otherwise: the LoomValue expression
};

std::string optional_value(const std::string& name, const std::string& to_value) {
  return name + " ? " + to_value + " : detail::none_value()";
}

// `name` as a C++ parameter of its type, or nullopt with the reason.
std::optional<Mapped> map_argument(const Argument& a, const std::string& name, std::string& why_not) {
  const bool opt = a.optional;
  auto wrap = [&](const std::string& type) { return opt ? "std::optional<" + type + ">" : type; };
  // For a `T?` the value of `*name`, else of `name`.
  const std::string v = opt ? "*" + name : name;
  auto value = [&](const std::string& to_value) { return opt ? optional_value(name, to_value) : to_value; };
  switch (a.type) {
    case ArgType::Tensor:
      if (a.mutated) {
        why_not = "writes its argument '" + a.name + "' (only self may be written by a method)";
        return std::nullopt;
      }
      if (opt) return Mapped{"const std::optional<Tensor>&", name + " ? &*" + name + " : nullptr", ""};
      return Mapped{"const Tensor&", "&" + name, ""};
    case ArgType::Scalar: return Mapped{wrap("Scalar"), "", value(opt ? name + "->abi()" : name + ".abi()")};
    case ArgType::Int: return Mapped{wrap("int64_t"), "", value("int_value(" + v + ")")};
    case ArgType::IntList: return Mapped{wrap("IntArrayRef"), "", value("detail::int_list_value(" + v + ")")};
    case ArgType::Float: return Mapped{wrap("double"), "", value("detail::float_value(" + v + ")")};
    case ArgType::Bool: return Mapped{wrap("bool"), "", value("detail::bool_value(" + v + ")")};
    case ArgType::Str:
      return Mapped{"const " + wrap("std::string") + "&", "", value("string_value(" + v + ")")};
    case ArgType::ScalarType:  // dtype_value takes the optional itself
      return Mapped{wrap("DType"), "", "detail::dtype_value(" + name + ")"};
    case ArgType::Device: return Mapped{wrap("Device"), "", value("device_value(" + v + ")")};
    case ArgType::Generator:
      if (!opt) break;  // the hand-written API only ever takes an optional one
      return Mapped{"const std::optional<Generator>&", "",
                    "detail::generator_value(" + name + " ? &*" + name + " : nullptr)"};
    case ArgType::TensorList:
    case ArgType::FloatList:
      break;
  }
  why_not = "argument '" + a.name + "' is a " + std::string(arg_type_name(a.type)) + (opt ? "?" : "") +
            ", which the C++ API has no parameter type for";
  return std::nullopt;
}

// The schema default as a C++ default argument; empty when there is none.
std::optional<std::string> default_argument(const Argument& a, std::string& why_not) {
  if (!a.default_text) return std::string();
  const std::string& text = *a.default_text;
  if (text == "None") return std::string("std::nullopt");
  switch (a.type) {
    case ArgType::Int:
    case ArgType::Float:
      return text;
    case ArgType::Bool:
      return std::string(text == "True" ? "true" : "false");
    case ArgType::Scalar:
      if (a.default_value.kind == LOOM_VALUE_BOOL) return std::string(a.default_value.u.i ? "true" : "false");
      return text;
    case ArgType::IntList: {
      std::string list = "{";
      for (size_t i = 0; i < a.default_ints.size(); ++i)
        list += (i ? ", " : "") + std::to_string(a.default_ints[i]);
      return list + "}";
    }
    case ArgType::Str: {
      std::string s = "\"";
      for (char c : text.substr(1, text.size() - 2)) {
        if (c == '"' || c == '\\') s += '\\';
        s += c;
      }
      return s + "\"";
    }
    default:
      break;
  }
  why_not = "argument '" + a.name + "' has the default '" + text + "', which has no C++ spelling here";
  return std::nullopt;
}

// A schema name as a C++ parameter name: keywords, and the names the body
// uses for itself, get a trailing underscore.
std::string parameter_name(const std::string& name) {
  static const std::set<std::string> taken = {
      "op", "call", "this", "and", "or", "not", "xor", "bitand", "bitor", "compl", "auto", "bool",
      "break", "case", "catch", "char", "class", "const", "continue", "default", "delete", "do",
      "double", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend",
      "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "operator", "private",
      "protected", "public", "register", "return", "short", "signed", "sizeof", "static", "struct",
      "switch", "template", "throw", "true", "try", "typedef", "typename", "union", "unsigned",
      "using", "virtual", "void", "volatile", "while", "requires", "concept"};
  return taken.count(name) ? name + "_" : name;
}

std::optional<std::string> return_type(const Schema& s, bool& returns_self, std::string& why_not) {
  const Argument& self = s.args[0];
  returns_self = false;
  if (s.returns.empty()) return std::string("void");
  for (const Argument& r : s.returns) {
    const bool plain_tensor = r.type == ArgType::Tensor && !r.optional;
    const bool list = r.type == ArgType::TensorList && s.returns.size() == 1;
    if (!plain_tensor && !list) {
      why_not = "returns a " + std::string(arg_type_name(r.type)) + (r.optional ? "?" : "") +
                ", which the generator has no C++ type for";
      return std::nullopt;
    }
  }
  if (s.returns.size() == 1) {
    const Argument& r = s.returns[0];
    if (r.type == ArgType::TensorList) return std::string("std::vector<Tensor>");
    returns_self = r.mutated && self.mutated && !r.alias.empty() && r.alias == self.alias;
    return std::string(returns_self ? "Tensor&" : "Tensor");
  }
  std::string tuple = "std::tuple<";
  for (size_t i = 0; i < s.returns.size(); ++i) tuple += i ? ", Tensor" : "Tensor";
  return tuple + ">";
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

}  // namespace

Signature Method::signature() const {
  Signature s;
  for (const Parameter& p : params) {
    s.types.push_back(normalise_type(p.type));
    if (p.default_value.empty() && s.required + 1 == s.types.size()) ++s.required;
  }
  return s;
}

std::string Method::declaration() const {
  std::vector<std::string> ps;
  for (const Parameter& p : params)
    ps.push_back(p.type + " " + p.name + (p.default_value.empty() ? "" : " = " + p.default_value));
  return returns + " " + name + "(" + join(ps) + ")" + (is_const ? " const" : "") + ";";
}

std::string Method::definition() const {
  std::vector<std::string> ps;
  for (const Parameter& p : params) ps.push_back(p.type + " " + p.name);
  std::string out = returns + " Tensor::" + name + "(" + join(ps) + ")" + (is_const ? " const" : "") + " {\n";
  for (const std::string& line : body) out += "  " + line + "\n";
  return out + "}\n";
}

std::optional<Method> method_from_schema(const Schema& s, bool number_form, std::string& why_not) {
  Method m;
  m.name = s.name;
  m.op = s.full_name();
  m.schema = s.text;
  m.is_const = !s.args[0].mutated;
  bool returns_self = false;
  const std::optional<std::string> ret = return_type(s, returns_self, why_not);
  if (!ret) return std::nullopt;
  m.returns = *ret;

  if (number_form)  // the last plain Tensor argument
    for (size_t i = s.args.size(); i-- > 1;)
      if (s.args[i].type == ArgType::Tensor && !s.args[i].optional) {
        m.number_param = static_cast<int>(i) - 1;
        break;
      }
  std::vector<std::string> tensors = {"this"}, values;
  std::vector<std::string> prologue;
  for (size_t i = 1; i < s.args.size(); ++i) {
    const Argument& a = s.args[i];
    Parameter p;
    p.name = parameter_name(a.name);
    const std::optional<std::string> def = default_argument(a, why_not);
    if (!def) return std::nullopt;
    p.default_value = *def;
    if (static_cast<int>(i) - 1 == m.number_param) {
      p.type = "Scalar";
      const std::string wrapped = p.name + "_as_tensor";
      prologue.push_back("const Tensor " + wrapped + " = loom::scalar_tensor(" + p.name + ", this->device());");
      tensors.push_back("&" + wrapped);
    } else {
      const std::optional<Mapped> mapped = map_argument(a, p.name, why_not);
      if (!mapped) return std::nullopt;
      p.type = mapped->type;
      (mapped->tensor.empty() ? values : tensors).push_back(mapped->tensor.empty() ? mapped->value : mapped->tensor);
    }
    m.params.push_back(std::move(p));
  }
  // C++ takes defaults only on trailing parameters: one without a default
  // drops those before it (the schema may default an argument it follows
  // with a required one, e.g. before its keyword-only part).
  bool required_seen = false;
  for (size_t i = m.params.size(); i-- > 0;) {
    if (m.params[i].default_value.empty()) required_seen = true;
    else if (required_seen) m.params[i].default_value.clear();
  }

  m.body.push_back("static const OpDef& op = find_op(\"" + m.op + "\");");
  m.body.insert(m.body.end(), prologue.begin(), prologue.end());
  const std::string run = "detail::run_op(op, {" + join(tensors) + "}" +
                          (values.empty() ? "" : ", {" + join(values) + "}") + ")";
  if (m.returns == "Tensor") {
    m.body.push_back("return " + run + ";");
  } else if (returns_self) {
    m.body.push_back(run + ";");
    m.body.push_back("return *this;");
  } else {  // several results, a list, or none: the OpCall itself
    m.body.push_back("OpCall call(op);");
    for (const std::string& t : tensors) m.body.push_back("call.args.push_back(" + t + ");");
    for (const std::string& v : values) m.body.push_back("call.values.push_back(" + v + ");");
    m.body.push_back("dispatch(call);");
    if (m.returns == "std::vector<Tensor>") {
      m.body.push_back("std::vector<Tensor> results;");
      m.body.push_back("for (OutputPlan& o : call.outputs) results.push_back(std::move(o.result));");
      m.body.push_back("return results;");
    } else if (m.returns != "void") {
      std::vector<std::string> results;
      for (size_t i = 0; i < s.returns.size(); ++i)
        results.push_back("std::move(call.outputs[" + std::to_string(i) + "].result)");
      m.body.push_back("return {" + join(results) + "};");
    }
  }
  return m;
}

}  // namespace loom::tools
