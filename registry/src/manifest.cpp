// Reading and validating plugin manifests.
//
// Every error names the field ("plugin.device_types[1]") and what is wrong
// with it; the caller prefixes the manifest path. Unknown fields are ignored
// so that a newer manifest minor version still loads.
#include "detail.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

namespace loom::registry::detail {

namespace {

using nlohmann::json;

// The manifest format major version this registry reads.
constexpr int kFileFormatMajor = 1;

// Thrown (and caught in parse_manifest) for a field that fails validation.
struct FieldError {
  std::string message;
};

[[noreturn]] void fail(const std::string& field, const std::string& problem) {
  throw FieldError{cat("field \"", field, "\" ", problem)};
}

const json& require(const json& object, const char* key, const std::string& field) {
  auto it = object.find(key);
  if (it == object.end()) fail(field, "is missing");
  return *it;
}

std::string require_string(const json& object, const char* key, const std::string& field) {
  const json& v = require(object, key, field);
  if (!v.is_string()) fail(field, cat("must be a string, got ", v.type_name()));
  std::string s = v.get<std::string>();
  if (s.empty()) fail(field, "must not be empty");
  return s;
}

// A value for a message: scalars as written, containers by type only (a
// deeply nested array would overflow the stack in dump(): found by
// fuzz/manifest).
std::string describe(const json& v) {
  if (v.is_structured()) return v.type_name();
  return cat(v.type_name(), " ", v.dump());
}

bool parse_int(std::string_view text, int& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= 0;
}

}  // namespace

bool parse_version(const std::string& text, int& major, int& minor) {
  auto dot = text.find('.');
  if (dot == std::string::npos) return false;
  std::string_view v(text);
  return parse_int(v.substr(0, dot), major) && parse_int(v.substr(dot + 1), minor);
}

bool parse_manifest(const std::string& text, const fs::path& path, Manifest& out,
                    std::string& error, std::string& name_hint) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    // Not only parse_error: a number too large for a double ("1e999")
    // throws out_of_range.406 from the parser (found by fuzz/manifest).
    // e.what() is "[json.exception.parse_error.101] parse error at line L,
    // column C: ..."; keep the position and the parser's explanation.
    std::string what = e.what();
    auto close = what.find("] ");
    if (what.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
      what = what.substr(close + 2);
    error = cat("invalid JSON: ", what);
    return false;
  }

  try {
    if (!doc.is_object()) fail("(top level)", cat("must be a JSON object, got ", doc.type_name()));

    // file_format_version: "MAJOR.MINOR" or "MAJOR.MINOR.PATCH"; only the
    // major decides whether we can read it.
    std::string ffv = require_string(doc, "file_format_version", "file_format_version");
    int ff_major = 0, ff_minor = 0;
    std::string ff_head = ffv.substr(0, ffv.find('.', ffv.find('.') + 1));
    if (!parse_version(ff_head, ff_major, ff_minor))
      fail("file_format_version", cat("must look like \"1.0\", got \"", ffv, "\""));
    if (ff_major != kFileFormatMajor)
      fail("file_format_version", cat("is \"", ffv, "\": unsupported major version ", ff_major,
                                      " (this loom reads ", kFileFormatMajor, ".x)"));

    const json& plugin = require(doc, "plugin", "plugin");
    if (!plugin.is_object()) fail("plugin", cat("must be an object, got ", plugin.type_name()));

    // Read the name first so that later errors can still be shown under it.
    auto name_it = plugin.find("name");
    if (name_it != plugin.end() && name_it->is_string()) name_hint = name_it->get<std::string>();

    Manifest m;
    m.path = path.string();
    m.name = require_string(plugin, "name", "plugin.name");
    m.library_path_raw = require_string(plugin, "library_path", "plugin.library_path");

    m.abi_version = require_string(plugin, "abi_version", "plugin.abi_version");
    if (!parse_version(m.abi_version, m.abi_major, m.abi_minor))
      fail("plugin.abi_version", cat("must be \"MAJOR.MINOR\", got \"", m.abi_version, "\""));

    // A device plugin lists device_types; a communication plugin
    // (comm_api.h) lists comm_backends instead, and its abi_version is the
    // communication ABI's.
    auto names = [&](const json& list, const char* field_name, std::vector<std::string>& out_names) {
      const std::string field = cat("plugin.", field_name);
      if (!list.is_array()) fail(field, cat("must be an array of strings, got ", list.type_name()));
      for (std::size_t i = 0; i < list.size(); ++i) {
        std::string item_field = cat(field, "[", i, "]");
        if (!list[i].is_string()) fail(item_field, cat("must be a string, got ", list[i].type_name()));
        std::string t = list[i].get<std::string>();
        if (t.empty()) fail(item_field, "must not be empty");
        out_names.push_back(std::move(t));
      }
    };
    auto backends = plugin.find("comm_backends");
    if (backends != plugin.end()) {
      names(*backends, "comm_backends", m.comm_backends);
      if (m.comm_backends.empty()) fail("plugin.comm_backends", "must name at least one backend");
      auto types = plugin.find("device_types");
      if (types != plugin.end()) names(*types, "device_types", m.device_types);
      if (!m.device_types.empty())
        fail("plugin.device_types", "must be empty for a communication plugin (one with comm_backends)");
    } else {
      names(require(plugin, "device_types", "plugin.device_types"), "device_types", m.device_types);
    }

    auto prio = plugin.find("priority");
    if (prio != plugin.end()) {
      if (!prio->is_number_integer())
        fail("plugin.priority", cat("must be an integer, got ", describe(*prio)));
      if (prio->is_number_unsigned() ? prio->get<std::uint64_t>() > static_cast<std::uint64_t>(INT_MAX)
                                     : (prio->get<std::int64_t>() > INT_MAX ||
                                        prio->get<std::int64_t>() < INT_MIN))
        fail("plugin.priority", cat("is out of range: ", prio->dump()));
      m.priority = prio->get<int>();
    }

    // library_path is relative to the directory the manifest really lives
    // in: resolve that directory's symlinks first so that "../" climbs the
    // same tree the dynamic loader would.
    fs::path lib(m.library_path_raw);
    if (lib.is_relative()) {
      std::error_code ec;
      fs::path dir = fs::canonical(path.parent_path(), ec);
      if (ec) dir = path.parent_path();
      lib = dir / lib;
    }
    m.library_path = lib.lexically_normal().string();

    out = std::move(m);
    return true;
  } catch (const FieldError& e) {
    error = e.message;
    return false;
  } catch (const json::exception& e) {
    // Should not happen after the type checks above; report it anyway.
    error = cat("malformed manifest: ", e.what());
    return false;
  }
}

bool read_manifest(const fs::path& path, Manifest& out, std::string& error,
                   std::string& name_hint) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = cat("cannot open manifest: ", std::strerror(errno));
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    error = "cannot read manifest: I/O error";
    return false;
  }
  return parse_manifest(text.str(), path, out, error, name_hint);
}

}  // namespace loom::registry::detail
