// hand_written_methods.cpp — see hand_written_methods.h.
//
// Not a C++ parser: it reads the declarations of one class written in this
// project's style. It drops comments, literals and preprocessor lines, walks
// the class body at brace depth one, and takes every declaration (ended by
// `;` or by an inline body) whose first `(` follows an identifier: that
// identifier is the method's name, the parentheses its parameters.
#include "hand_written_methods.h"

#include <loom/plugin/op_tables.h>

#include <cctype>
#include <regex>
#include <stdexcept>

namespace loom::tools {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1);
}

// The text with comments and preprocessor lines (continuations included)
// blanked out and every string or character literal emptied, so braces and
// parentheses that remain are code.
std::string strip(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool line_start = true;  // only whitespace so far on this line
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
      line_start = true;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 1;
      out += ' ';
      continue;
    }
    if (c == '#' && line_start) {
      while (i < text.size() && !(text[i] == '\n' && text[i - 1] != '\\')) ++i;
      out += '\n';
      continue;
    }
    if (c == '"' || c == '\'') {
      out += c;
      for (++i; i < text.size() && text[i] != c; ++i)
        if (text[i] == '\\') ++i;
      out += c;
      line_start = false;
      continue;
    }
    if (c == '\n') line_start = true;
    else if (!std::isspace(static_cast<unsigned char>(c))) line_start = false;
    out += c;
  }
  return out;
}

// Splits at the commas outside any bracket.
std::vector<std::string> split_top_level(const std::string& s) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(' || c == '<' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '>' || c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty() || !parts.empty()) parts.push_back(cur);
  return parts;
}

// One parameter's type: its declaration without the default and the name.
std::string parameter_type(const std::string& param, bool& has_default) {
  std::string decl = param;
  int depth = 0;
  has_default = false;
  for (size_t i = 0; i < decl.size(); ++i) {
    const char c = decl[i];
    if (c == '(' || c == '<' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '>' || c == '}' || c == ']') --depth;
    if (c == '=' && depth == 0) {
      has_default = true;
      decl = decl.substr(0, i);
      break;
    }
  }
  decl = trim(decl);
  // Drop a trailing name, unless what is left would not be a type
  // ("int64_t" unnamed, or a lone "const").
  size_t end = decl.size();
  while (end > 0 && is_word_char(decl[end - 1])) --end;
  if (end < decl.size() && end > 0) {
    const std::string rest = trim(decl.substr(0, end));
    if (!rest.empty() && rest != "const") decl = rest;
  }
  return normalise_type(decl);
}

void add(MethodSet& methods, const std::string& name, std::vector<std::string> types) {
  Signature s;
  s.required = types.size();
  s.types = std::move(types);
  methods[name].push_back(std::move(s));
}

// The methods one X-macro table's expansion in class Tensor declares, as the
// LOOM_*_METHODS macros beside it in tensor.h write them.
void add_table(MethodSet& methods, const std::string& table) {
  if (table == "LOOM_UNARY_OPS") {
#define LOOM_SCAN_UNARY(op, ...) add(methods, #op, {}), add(methods, #op "_", {});
    LOOM_UNARY_OPS(LOOM_SCAN_UNARY)
#undef LOOM_SCAN_UNARY
  } else if (table == "LOOM_PREDICATE_OPS") {
#define LOOM_SCAN_PREDICATE(op) add(methods, #op, {});
    LOOM_PREDICATE_OPS(LOOM_SCAN_PREDICATE)
#undef LOOM_SCAN_PREDICATE
  } else if (table == "LOOM_BINARY_OPS") {
#define LOOM_SCAN_BINARY(op, rule, inplace, F)               \
  add(methods, #op, {"const Tensor&"});                      \
  if (inplace) add(methods, #op "_", {"const Tensor&"});
    LOOM_BINARY_OPS(LOOM_SCAN_BINARY)
#undef LOOM_SCAN_BINARY
  } else {
    throw std::runtime_error("class Tensor expands the table " + table +
                             ", which core/tools/hand_written_methods.cpp does not know: add it to add_table");
  }
}

// One member declaration (without its `;` or body).
void add_declaration(MethodSet& methods, std::string decl) {
  // X-macro tables expand without a `;`, so they lead the next declaration.
  static const std::regex table_use(R"(\b(LOOM_[A-Z0-9_]+_OPS)\s*\(\s*\w+\s*\))");
  for (std::smatch m; std::regex_search(decl, m, table_use);) {
    add_table(methods, m[1]);
    decl = m.prefix().str() + " " + m.suffix().str();
  }
  static const std::regex access(R"(\b(public|private|protected)\s*:(?!:))");
  decl = std::regex_replace(decl, access, " ");
  const size_t open = decl.find('(');
  if (open == std::string::npos) return;  // a data member, a using, a friend class
  size_t name_end = open;
  while (name_end > 0 && std::isspace(static_cast<unsigned char>(decl[name_end - 1]))) --name_end;
  size_t name_begin = name_end;
  while (name_begin > 0 && is_word_char(decl[name_begin - 1])) --name_begin;
  if (name_begin == name_end) return;  // operator[], operator<<
  const std::string name = decl.substr(name_begin, name_end - name_begin);
  if (name.rfind("LOOM_", 0) == 0)
    throw std::runtime_error("class Tensor uses the macro " + name +
                             ", which core/tools/hand_written_methods.cpp cannot read");
  if (trim(decl.substr(0, name_begin)).ends_with("operator")) return;  // operator bool()
  int depth = 0;
  size_t close = open;
  for (; close < decl.size(); ++close) {
    if (decl[close] == '(') ++depth;
    if (decl[close] == ')' && --depth == 0) break;
  }
  Signature s;
  bool defaults_started = false;
  for (const std::string& p : split_top_level(decl.substr(open + 1, close - open - 1))) {
    bool has_default = false;
    s.types.push_back(parameter_type(p, has_default));
    defaults_started = defaults_started || has_default;
    if (!defaults_started) ++s.required;
  }
  methods[name].push_back(std::move(s));
}

}  // namespace

MethodSet scan_hand_written_methods(const std::string& header_text) {
  const std::string text = strip(header_text);
  static const std::regex class_head(R"(\bclass\s+Tensor\s*\{)");
  std::smatch m;
  if (!std::regex_search(text, m, class_head)) throw std::runtime_error("no `class Tensor {` in the header");
  MethodSet methods;
  std::string decl;
  int parens = 0;
  for (size_t i = static_cast<size_t>(m.position(0) + m.length(0)); i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(') ++parens;
    if (c == ')') --parens;
    if (parens > 0) {  // parameters, default arguments included (`= {}`)
      decl += c;
      continue;
    }
    if (c == '}') {  // the end of the class
      add_declaration(methods, decl);  // a table expanded last has no `;`
      return methods;
    }
    if (c == ';') {
      add_declaration(methods, decl);
      decl.clear();
      continue;
    }
    if (c == '{') {  // an inline body, or a data member's braced initialiser
      int depth = 1;
      while (depth > 0 && ++i < text.size()) {
        if (text[i] == '{') ++depth;
        if (text[i] == '}') --depth;
      }
      if (decl.find('(') != std::string::npos) {
        add_declaration(methods, decl);
        decl.clear();
      }
      continue;
    }
    decl += c;
  }
  throw std::runtime_error("class Tensor has no closing brace");
}

}  // namespace loom::tools
