// gen_tensor_methods.cpp — loom-gen-tensor-methods: writes the C++ Tensor
// methods of the core op catalog, as Python makes them at run time
// (frontend_python/loom/_ops.py).
//
//   loom-gen-tensor-methods CORE_DIR           writes the two files below
//   loom-gen-tensor-methods --check CORE_DIR   exits 1 when they are stale
//
// CORE_DIR is the source tree's core/. The files, both committed:
//   include/loom/detail/tensor_methods_generated.inc  declarations, included
//                                                     inside class Tensor
//   src/tensor_methods_generated.cpp                  definitions (loom_core)
// `cmake --build BUILD --target loom_regen_tensor_methods` runs the first
// form; the ctest core.tensor_methods_generated_fresh the second.
//
// Which ops get a method:
//   - ops of the core catalog (what loom_core defines when it loads; plugins
//     and C++ libraries define theirs at run time, too late for C++ methods),
//   - public ones: the name does not start with '_', and no `.out` overload,
//   - whose first argument is `Tensor self` (a const method) or
//     `Tensor(a!) self` (an in-place one, non-const, returning *this),
//   - whose name tensor.h does not already declare by hand: hand-written
//     methods keep priority, and a generated overload beside them could make
//     their calls ambiguous (x.sum() against sum(dim=None, ...)). The names
//     are read from tensor.h itself (hand_written_methods.h).
// Every overload of a name is generated (scatter.src and scatter.value), in
// name order, unless a call could match an earlier one (signature.h).
//
// Number forms: for the elementwise binary and ternary ops (the rows of
// LOOM_BINARY_OPS and LOOM_BINARY_SPECIAL_OPS, and their in-place forms),
// whose tensor arguments broadcast, a second overload takes the last tensor
// argument as a Scalar, as loom::lerp(a, end, Scalar) and PyTorch's
// .Scalar overloads do: x.lerp(end, 0.5), x.fmod(2), x.eq(0). It is
// generated beside hand-written overloads too, unless one of them could take
// the same call (add(Scalar), pow(Scalar) are written by hand).
//
// Ops with an argument or result the C++ API has no type for are listed, with
// the reason, in the generated files' header, so none is dropped silently.
//
// If a change to tensor.h makes the committed declarations clash (loom_core
// then fails to build, and so does this tool), empty both files, build, and
// regenerate.
#include "hand_written_methods.h"
#include "method_from_schema.h"

#include <loom/op_registry.h>
#include <loom/plugin/op_tables.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace loom::tools {
namespace {

constexpr const char* kHeaderPath = "include/loom/tensor.h";
constexpr const char* kIncPath = "include/loom/detail/tensor_methods_generated.inc";
constexpr const char* kCppPath = "src/tensor_methods_generated.cpp";
constexpr const char* kRegenerate = "cmake --build <build dir> --target loom_regen_tensor_methods";

// The elementwise ops whose last tensor argument may be a number.
const std::set<std::string>& number_form_ops() {
  static const std::set<std::string> names = [] {
    std::set<std::string> s;
#define LOOM_GEN_BINARY(op, ...) s.insert(#op), s.insert(#op "_");
    LOOM_BINARY_OPS(LOOM_GEN_BINARY)
    LOOM_BINARY_SPECIAL_OPS(LOOM_GEN_BINARY)
#undef LOOM_GEN_BINARY
    return s;
  }();
  return names;
}

struct Catalog {
  std::vector<Method> methods;                    // in output order
  std::vector<std::string> hand_written;          // ops whose name tensor.h declares
  std::vector<std::string> hand_written_numbers;  // ... and whose number form it has
  std::vector<std::string> skipped;               // "op: why"
};

bool takes_self(const Schema& s) {
  return !s.args.empty() && s.args[0].type == ArgType::Tensor && !s.args[0].optional && s.args[0].name == "self";
}

// The first method already chosen that a call to `m` could also reach.
const Method* clash(const Method& m, const std::vector<Method>& chosen) {
  for (const Method& c : chosen)
    if (c.name == m.name && may_be_ambiguous(c.signature(), m.signature())) return &c;
  return nullptr;
}

std::string param_list(const Method& m) {
  std::string s;
  for (size_t i = 0; i < m.params.size(); ++i) s += (i ? ", " : "") + m.params[i].type;
  return m.name + "(" + s + ")";
}

// Adds `m` unless a call could also reach a method already chosen.
void choose(Method m, const std::string& what, Catalog& out) {
  if (const Method* other = clash(m, out.methods))
    out.skipped.push_back(what + ": a call could also match " + param_list(*other));
  else
    out.methods.push_back(std::move(m));
}

// The overload the schema itself describes, unless tensor.h writes the name.
void add_schema_method(const Schema& s, const MethodSet& hand_written, Catalog& out) {
  std::string why;
  if (hand_written.count(s.name))
    out.hand_written.push_back(s.full_name());
  else if (std::optional<Method> m = method_from_schema(s, false, why))
    choose(std::move(*m), s.full_name(), out);
  else
    out.skipped.push_back(s.full_name() + ": " + why);
}

// For an elementwise row: the overload with a number for the last tensor,
// also beside hand-written methods that cannot take the same call.
void add_number_form(const Schema& s, const MethodSet& hand_written, Catalog& out) {
  const auto by_hand = hand_written.find(s.name);
  std::string why;
  std::optional<Method> m = method_from_schema(s, true, why);
  if (!m) {  // add_schema_method reported it, unless the name is hand-written
    if (by_hand != hand_written.end()) out.skipped.push_back(s.full_name() + " (number form): " + why);
    return;
  }
  if (m->number_param < 0) return;  // no tensor argument but self
  if (by_hand != hand_written.end())
    for (const Signature& h : by_hand->second)
      if (may_be_ambiguous(h, m->signature())) {
        out.hand_written_numbers.push_back(s.full_name());
        return;
      }
  choose(std::move(*m), s.full_name() + " (number form)", out);
}

Catalog select_methods(const MethodSet& hand_written) {
  std::vector<const Schema*> schemas;
  for (const OpDef* op : Dispatcher::instance().ops())
    if (op->defined_at().rfind("loom core", 0) == 0) schemas.push_back(&op->schema());
  // By name, so the files do not change with the order the core's sources link in.
  std::sort(schemas.begin(), schemas.end(),
            [](const Schema* a, const Schema* b) { return a->full_name() < b->full_name(); });
  Catalog out;
  for (const Schema* s : schemas) {
    if (s->name.starts_with('_') || s->overload == "out" || !takes_self(*s)) continue;
    add_schema_method(*s, hand_written, out);
    if (number_form_ops().count(s->name)) add_number_form(*s, hand_written, out);
  }
  return out;
}

// `items` as comment lines of at most ~90 columns.
void write_wrapped(std::ostream& os, const std::vector<std::string>& items) {
  std::string line = "//  ";
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string item = " " + items[i] + (i + 1 < items.size() ? "," : "");
    if (line.size() + item.size() > 90) {
      os << line << "\n";
      line = "//  ";
    }
    line += item;
  }
  os << line << "\n";
}

void write_banner(std::ostream& os, const Catalog& c) {
  os << "// Generated by loom-gen-tensor-methods (core/tools/gen_tensor_methods.cpp)\n"
     << "// from the core op catalog: do not edit. Regenerate with\n"
     << "//   " << kRegenerate << "\n"
     << "// (the ctest core.tensor_methods_generated_fresh fails while it is stale).\n"
     << "//\n"
     << "// Written by hand in loom/tensor.h, so not generated:\n";
  write_wrapped(os, c.hand_written);
  os << "// Number forms (the last tensor argument a Scalar) written by hand:\n";
  write_wrapped(os, c.hand_written_numbers);
  os << "// Not generated:\n";
  if (c.skipped.empty()) os << "//   (none)\n";
  for (const std::string& s : c.skipped) os << "//   " << s << "\n";
}

std::string comment_for(const Method& m) {
  if (m.number_param < 0) return m.schema;
  return m.name + " with '" + m.params[static_cast<size_t>(m.number_param)].name +
         "' a number (a 0-d wrapped number on self's device)";
}

std::string declarations(const Catalog& c) {
  std::ostringstream os;
  write_banner(os, c);
  os << "//\n"
     << "// Included inside class Tensor (loom/tensor.h); the definitions are in\n"
     << "// core/src/tensor_methods_generated.cpp. Each calls its op through the\n"
     << "// dispatcher, as the op's loom:: function does.\n";
  for (const Method& m : c.methods) os << "\n  // " << comment_for(m) << "\n  " << m.declaration() << "\n";
  return os.str();
}

std::string definitions(const Catalog& c) {
  std::ostringstream os;
  write_banner(os, c);
  os << "//\n"
     << "// The Tensor methods of loom/detail/tensor_methods_generated.inc. Each\n"
     << "// looks its op up once and dispatches it with its arguments in schema\n"
     << "// order (tensors in OpCall::args, the rest as LoomValues).\n"
     << "#include \"core_op.h\"\n\n"
     << "#include <loom/ops.h>\n\n"
     << "#include <optional>\n#include <string>\n#include <string_view>\n#include <tuple>\n#include <vector>\n\n"
     << "namespace loom {\n"
     << "namespace {\n\n"
     << "const OpDef& find_op(std::string_view name) { return Dispatcher::instance().op(name); }\n\n"
     << "// The LoomValue makers of core_op.h.\n"
     << "using detail::device_value;\nusing detail::int_value;\nusing detail::string_value;\n\n"
     << "}  // namespace\n";
  for (const Method& m : c.methods) os << "\n// " << comment_for(m) << "\n" << m.definition();
  os << "\n}  // namespace loom\n";
  return os.str();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// 0 when `path` holds `text`; else says where they part.
int check(const std::string& path, const std::string& text) {
  std::string found;
  try {
    found = read_file(path);
  } catch (const std::exception&) {
    std::cerr << path << " is missing\n";
    return 1;
  }
  if (found == text) return 0;
  std::istringstream want(text), have(found);
  std::string w, h;
  int line = 1;
  for (;; ++line) {
    const bool more_w = static_cast<bool>(std::getline(want, w));
    const bool more_h = static_cast<bool>(std::getline(have, h));
    if (more_w && more_h && w == h) continue;
    if (!more_w) w = "(end of file)";
    if (!more_h) h = "(end of file)";
    break;
  }
  std::cerr << path << " is stale (first difference at line " << line << ": expected \"" << w
            << "\", found \"" << h << "\"). Regenerate with\n  " << kRegenerate << "\n";
  return 1;
}

void write(const std::string& path, const std::string& text) {
  std::string old;
  try {
    old = read_file(path);
  } catch (const std::exception&) {
  }
  if (old == text) {
    std::cout << path << ": up to date\n";
    return;
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
  std::cout << path << ": written\n";
}

}  // namespace
}  // namespace loom::tools

int main(int argc, char** argv) {
  using namespace loom::tools;
  const bool check_only = argc == 3 && std::string(argv[1]) == "--check";
  if (argc != 2 && !check_only) {
    std::cerr << "usage: loom-gen-tensor-methods [--check] CORE_DIR\n";
    return 2;
  }
  const std::string core = std::string(argv[argc - 1]) + "/";
  try {
    const Catalog catalog = select_methods(scan_hand_written_methods(read_file(core + kHeaderPath)));
    const std::string inc = declarations(catalog), cpp = definitions(catalog);
    if (check_only) return check(core + kIncPath, inc) | check(core + kCppPath, cpp);
    write(core + kIncPath, inc);
    write(core + kCppPath, cpp);
  } catch (const std::exception& e) {
    std::cerr << "loom-gen-tensor-methods: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
