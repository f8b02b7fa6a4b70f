// schema.cpp — a small recursive-descent parser for op schemas.
#include <loom/error.h>
#include <loom/schema.h>
#include <loom/schema_defaults.h>

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace loom {

std::string_view arg_type_name(ArgType t) {
  switch (t) {
    case ArgType::Tensor: return "Tensor";
    case ArgType::TensorList: return "Tensor[]";
    case ArgType::Scalar: return "Scalar";
    case ArgType::Int: return "int";
    case ArgType::IntList: return "int[]";
    case ArgType::Float: return "float";
    case ArgType::FloatList: return "float[]";
    case ArgType::Bool: return "bool";
    case ArgType::Str: return "str";
    case ArgType::ScalarType: return "ScalarType";
    case ArgType::Device: return "Device";
    case ArgType::Generator: return "Generator";
  }
  return "?";
}

int Schema::num_tensor_args() const {
  int n = 0;
  for (const auto& a : args) n += a.type == ArgType::Tensor;
  return n;
}


namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Schema parse() {
    Schema schema;
    schema.text = std::string(s_);
    schema.name = identifier("op name");
    if (accept('.')) schema.overload = identifier("overload name");
    expect('(');
    bool kwarg_only = false;
    if (!accept(')')) {
      do {
        if (accept('*')) {
          kwarg_only = true;
          continue;
        }
        Argument a = argument(true);
        a.kwarg_only = kwarg_only;
        for (const auto& prev : schema.args)
          if (prev.name == a.name) fail("duplicate argument name '" + a.name + "'");
        schema.args.push_back(std::move(a));
      } while (accept(','));
      expect(')');
    }
    skip_ws();
    if (!consume("->")) fail("expected '->' and the return type");
    if (accept('(')) {
      if (!accept(')')) {
        do schema.returns.push_back(argument(false));
        while (accept(','));
        expect(')');
      }
    } else {
      schema.returns.push_back(argument(false));
    }
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after the return type");
    for (const auto& a : schema.args) schema.inplace |= a.mutated;
    return schema;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(detail::cat("invalid op schema '", s_, "' at position ", pos_, ": ", what));
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }
  bool consume(std::string_view word) {
    skip_ws();
    if (s_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }
  std::string identifier(const char* what) {
    skip_ws();
    size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    if (start == pos_ || std::isdigit(static_cast<unsigned char>(s_[start])))
      fail(std::string("expected ") + what);
    return std::string(s_.substr(start, pos_ - start));
  }

  Argument argument(bool named) {
    Argument a;
    std::string type = identifier("a type");
    if (type == "Tensor") a.type = ArgType::Tensor;
    else if (type == "Scalar") a.type = ArgType::Scalar;
    else if (type == "int" || type == "SymInt") a.type = ArgType::Int;
    else if (type == "float") a.type = ArgType::Float;
    else if (type == "bool") a.type = ArgType::Bool;
    else if (type == "str") a.type = ArgType::Str;
    else if (type == "ScalarType") a.type = ArgType::ScalarType;
    else if (type == "Device") a.type = ArgType::Device;
    else if (type == "Generator") a.type = ArgType::Generator;
    else fail("unknown type '" + type + "'");
    if (a.type == ArgType::Tensor && accept('(')) {  // alias annotation
      a.alias = identifier("an alias set");
      a.mutated = accept('!');
      expect(')');
    }
    if (accept('[')) {
      skip_ws();
      if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        size_t start = pos_;
        while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
        // from_chars, not atoi: atoi's overflow on "int[99999999999]" is
        // undefined behaviour.
        const std::string_view digits = s_.substr(start, pos_ - start);
        int size = 0;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size);
        if (ec != std::errc() || end != digits.data() + digits.size() || size <= 0 || size > 64)
          fail("list size must be in 1..64");
        a.list_size = size;
      }
      expect(']');
      switch (a.type) {
        case ArgType::Tensor: a.type = ArgType::TensorList; break;
        case ArgType::Int: a.type = ArgType::IntList; break;
        case ArgType::Float: a.type = ArgType::FloatList; break;
        default: fail("lists of " + type + " are not supported");
      }
    }
    a.optional = accept('?');
    if (!named) {  // return: optional name
      skip_ws();
      if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        a.name = identifier("a return name");
      return a;
    }
    a.name = identifier("an argument name");
    if (accept('=')) parse_default(a);
    return a;
  }

  std::string default_token() {
    skip_ws();
    size_t start = pos_;
    int depth = 0;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '[') ++depth;
      if (c == ']') --depth;
      if (depth == 0 && (c == ',' || c == ')')) break;
      if (depth < 0) fail("unbalanced ']' in a default");
      ++pos_;
    }
    std::string tok(s_.substr(start, pos_ - start));
    while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.back()))) tok.pop_back();
    if (tok.empty()) fail("expected a default value");
    return tok;
  }

  static bool parse_int(std::string_view t, int64_t& out) {
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return ec == std::errc() && p == t.data() + t.size();
  }
  static bool parse_double(const std::string& t, double& out) {
    char* end = nullptr;
    out = std::strtod(t.c_str(), &end);
    return !t.empty() && end == t.c_str() + t.size();
  }

  void parse_default(Argument& a) {
    std::string tok = default_token();
    a.default_text = tok;
    LoomValue& v = a.default_value;
    if (tok == "None") {
      if (!a.optional) fail("default None for non-optional argument '" + a.name + "'");
      v.kind = LOOM_VALUE_NONE;
      return;
    }
    switch (a.type) {
      case ArgType::Bool:
        if (tok != "True" && tok != "False") fail("bool default must be True or False");
        v.kind = LOOM_VALUE_BOOL;
        v.u.i = tok == "True";
        return;
      case ArgType::Int:
        v.kind = LOOM_VALUE_INT;
        if (!parse_int(tok, v.u.i)) fail("invalid int default '" + tok + "'");
        return;
      case ArgType::Float:
        v.kind = LOOM_VALUE_FLOAT;
        if (!parse_double(tok, v.u.f)) fail("invalid float default '" + tok + "'");
        return;
      case ArgType::Scalar:
        if (tok == "True" || tok == "False") {
          v.kind = LOOM_VALUE_BOOL;
          v.u.i = tok == "True";
        } else if (parse_int(tok, v.u.i)) {
          v.kind = LOOM_VALUE_INT;
        } else if (parse_double(tok, v.u.f)) {
          v.kind = LOOM_VALUE_FLOAT;
        } else {
          fail("invalid Scalar default '" + tok + "'");
        }
        return;
      case ArgType::Str:
        if (tok.size() < 2 || (tok.front() != '"' && tok.front() != '\'') || tok.back() != tok.front())
          fail("str default must be quoted");
        v.kind = LOOM_VALUE_STRING;
        return;  // the text is kept in default_text
      case ArgType::IntList:
      case ArgType::FloatList: {
        v.kind = a.type == ArgType::IntList ? LOOM_VALUE_INT_LIST : LOOM_VALUE_FLOAT_LIST;
        std::string body = tok;
        if (body.front() == '[') {
          if (body.back() != ']') fail("unterminated list default");
          body = body.substr(1, body.size() - 2);
        }
        size_t p = 0;
        while (p < body.size()) {
          size_t q = body.find(',', p);
          if (q == std::string::npos) q = body.size();
          std::string item = body.substr(p, q - p);
          item.erase(0, item.find_first_not_of(' '));
          item.erase(item.find_last_not_of(' ') + 1);
          if (!item.empty()) {
            if (a.type == ArgType::IntList) {
              int64_t x;
              if (!parse_int(item, x)) fail("invalid int in list default '" + item + "'");
              a.default_ints.push_back(x);
            } else {
              double x;
              if (!parse_double(item, x)) fail("invalid float in list default '" + item + "'");
              a.default_floats.push_back(x);
            }
          }
          p = q + 1;
        }
        // int[2] stride=1 means [1, 1].
        if (a.list_size > 1 && a.default_ints.size() == 1)
          a.default_ints.assign(static_cast<size_t>(a.list_size), a.default_ints[0]);
        return;
      }
      default:
        fail("argument '" + a.name + "' of type " + std::string(arg_type_name(a.type)) +
             " can only default to None");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Schema parse_schema(std::string_view text) { return Parser(text).parse(); }

LoomValue default_value_of(const Argument& a) {
  LoomValue v = a.default_value;
  if (v.kind == LOOM_VALUE_STRING && a.default_text && a.default_text->size() >= 2) {
    v.u.str.data = a.default_text->data() + 1;
    v.u.str.size = static_cast<int64_t>(a.default_text->size()) - 2;
  }
  if (a.type == ArgType::IntList && a.default_text && *a.default_text != "None") {
    v.kind = LOOM_VALUE_INT_LIST;
    v.u.ints.data = a.default_ints.data();
    v.u.ints.size = static_cast<int64_t>(a.default_ints.size());
  } else if (a.type == ArgType::FloatList && a.default_text && *a.default_text != "None") {
    v.kind = LOOM_VALUE_FLOAT_LIST;
    v.u.floats.data = a.default_floats.data();
    v.u.floats.size = static_cast<int64_t>(a.default_floats.size());
  }
  return v;
}

}  // namespace loom
